"""GeminiBackend driven through the real google-genai SDK against the loopback FakeGemini."""

import json
import socket
import time

import pytest
from backend_support import ask, collect, text_of

import massgen
from massgen.backends import registry
from massgen.backends.gemini import GeminiBackend
from massgen.backends.retry import RetryPolicy
from massgen.config.schema import BackendConfig
from massgen.core.errors import (
    AuthFailed,
    BadRequest,
    ConfigError,
    ContextTooLong,
    MalformedResponse,
    ProviderUnavailable,
    RateLimited,
)
from massgen.core.types import (
    Finish,
    GenerationParams,
    Message,
    ReasoningChunk,
    Request,
    TextChunk,
    ToolCall,
    ToolSpec,
    Usage,
)
from massgen.testing import FakeUsage, Fault, Reply, Scripted
from massgen.testing import fake_gemini as fg
from massgen.testing.fake_gemini import FakeGemini


@pytest.fixture
def make(backends):
    """Build GeminiBackends against a FakeGemini."""
    return backends(GeminiBackend, model="gemini-2.5-flash", api_key="AIza-test-key")


# --- streaming --------------------------------------------------------------------------


async def test_streams_text_part_by_part_then_usage_and_finish(make):
    with FakeGemini(Scripted([Reply(text="The answer is 42.")])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert [e for e in events if isinstance(e, TextChunk)] == [
        TextChunk("The "),
        TextChunk("answer "),
        TextChunk("is "),
        TextChunk("42."),
    ]
    assert isinstance(events[-2], Usage) and not events[-2].estimated
    assert events[-1] == Finish("stop")


async def test_thought_parts_become_reasoning_before_the_text(make):
    with FakeGemini(Scripted([Reply(text="42", reasoning="six times seven")])) as fake:
        events = await collect(make(fake).stream(ask()))
        thinking = fake.requests[0]["generationConfig"]["thinkingConfig"]
    reasoning = [e for e in events if isinstance(e, ReasoningChunk)]
    assert "".join(e.text for e in reasoning) == "six times seven"
    assert events.index(reasoning[-1]) < events.index(TextChunk("42"))
    assert thinking == {"include_thoughts": True}


async def test_function_calls_become_tool_calls_with_our_ids(make):
    calls = [
        ("new_answer", {"content": 'A long answer with "quotes" and unicode: é'}),
        ("vote", {"agent_id": "agent2.1", "reason": "best"}),
    ]
    with FakeGemini(Scripted([Reply(tool_calls=calls)])) as fake:
        events = await collect(make(fake).stream(ask()))
    tool_calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in tool_calls] == [
        ("call_1", *calls[0]),
        ("call_2", *calls[1]),
    ]
    assert events[-1] == Finish("tool_calls")


async def test_tool_results_go_back_as_function_responses_with_the_thought_signature(make):
    tool = ToolSpec("add", "Add numbers.", {"type": "object", "properties": {}})
    replies = [Reply(tool_calls=[("add", {"a": 2, "b": 3})]), Reply(text="5")]
    with FakeGemini(Scripted(replies)) as fake:
        backend = make(fake)
        first = Request(messages=(Message("user", "Add 2 and 3."),), tools=(tool,))
        (call,) = [e for e in await collect(backend.stream(first)) if isinstance(e, ToolCall)]
        history = (
            *first.messages,
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "5", tool_call_id=call.id),
        )
        await collect(backend.stream(Request(messages=history, tools=(tool,))))
        contents = fake.requests[1]["contents"]
    assert contents[1:] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"id": call.id, "name": "add", "args": {"a": 2, "b": 3}},
                    "thoughtSignature": fg.THOUGHT_SIGNATURE,
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": call.id, "name": "add", "response": {"result": "5"}}}
            ],
        },
    ]


async def test_usage_metadata_with_thoughts_and_cached_content(make):
    usage = FakeUsage(
        prompt_tokens=120, completion_tokens=30, cached_tokens=100, reasoning_tokens=12
    )
    with FakeGemini(Scripted([Reply(text="ok", usage=usage)])) as fake:
        events = await collect(make(fake).stream(ask()))
    # Output counts thoughts too (Gemini reports them apart from the candidates).
    assert Usage(120, 30, reasoning_tokens=12, cached_input_tokens=100) in events


async def test_usage_is_estimated_when_the_server_sends_none(make):
    with FakeGemini(Scripted([Reply(text="y" * 40, usage=None)])) as fake:
        events = await collect(make(fake).stream(ask("x" * 400)))
    assert Usage(input_tokens=100, output_tokens=10, estimated=True) in events


@pytest.mark.parametrize(
    ("finish", "ours"), [("length", "length"), ("SAFETY", "content_filter"), ("OTHER", "other")]
)
async def test_finish_reasons_are_normalised(make, finish, ours):
    with FakeGemini(Scripted([Reply(text="cut", finish_reason=finish)])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events[-1] == Finish(ours)


# --- what is sent -----------------------------------------------------------------------


async def test_request_uses_typed_params_system_instruction_and_json_schema_tools(make):
    history = (Message("system", "Be brief."), Message("user", "Add 2 and 3."))
    parameters = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": False,
    }
    tool = ToolSpec("add", "Add numbers.", parameters)
    params = GenerationParams(temperature=0.2, top_p=0.9, stop=("END",), seed=7)
    request = Request(messages=history, tools=(tool,), params=GenerationParams(max_tokens=64))
    with FakeGemini(Scripted([Reply(text="5")])) as fake:
        await collect(make(fake, params=params).stream(request))
        body = fake.requests[0]
    assert body["model"] == "gemini-2.5-flash"
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Add 2 and 3."}]}]
    (declaration,) = body["tools"][0]["functionDeclarations"]
    assert declaration == {
        "name": "add",
        "description": "Add numbers.",
        "parameters_json_schema": parameters,
    }
    config = body["generationConfig"]
    assert {k: v for k, v in config.items() if k != "thinkingConfig"} == {
        "temperature": 0.2,
        "topP": 0.9,
        "maxOutputTokens": 64,
        "stopSequences": ["END"],
        "seed": 7,
    }


async def test_extra_body_is_merged_into_the_request(make):
    extra = {"generationConfig": {"topK": 5}, "safetySettings": []}
    with FakeGemini(Scripted([Reply(text="ok")])) as fake:
        await collect(make(fake, params=GenerationParams(extra_body=extra)).stream(ask()))
        body = fake.requests[0]
    assert body["generationConfig"]["topK"] == 5 and body["safetySettings"] == []


@pytest.mark.parametrize(
    ("model", "effort", "thinking"),
    [
        ("gemini-2.5-pro", "low", {"include_thoughts": True, "thinking_budget": 1024}),
        ("gemini-3-pro-preview", "high", {"include_thoughts": True, "thinking_level": "HIGH"}),
        ("gemini-2.0-flash", "high", None),
    ],
)
async def test_reasoning_effort_becomes_a_thinking_budget_or_level(make, model, effort, thinking):
    params = GenerationParams(reasoning_effort=effort)
    with FakeGemini(Scripted([Reply(text="ok")])) as fake:
        await collect(make(fake, model=model, params=params).stream(ask()))
        config = fake.requests[0].get("generationConfig", {})
    assert config.get("thinkingConfig") == thinking


async def test_a_thinking_budget_wins_over_the_effort(make):
    params = GenerationParams(reasoning_effort="low")
    with FakeGemini(Scripted([Reply(text="ok")])) as fake:
        await collect(make(fake, params=params, thinking_budget=4096).stream(ask()))
        thinking = fake.requests[0]["generationConfig"]["thinkingConfig"]
    assert thinking == {"include_thoughts": True, "thinking_budget": 4096}


async def test_json_schema_becomes_a_response_json_schema(make):
    schema = {"title": "Workflow action", "type": "object", "properties": {}}
    with FakeGemini(Scripted([Reply(text="{}")])) as fake:
        await collect(make(fake).stream(ask(json_schema=schema)))
        config = fake.requests[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema


async def test_sends_the_key_as_x_goog_api_key_and_names_itself(make):
    with FakeGemini(Scripted([Reply(text="ok")])) as fake:
        backend = make(fake, model="gemini-2.5-pro")
        await collect(backend.stream(ask()))
        assert fake.headers[0]["x-goog-api-key"] == "AIza-test-key"
        assert fake.headers[0]["x-server-timeout"] == "1620"  # not the per-read timeout
    assert backend.name == "gemini:gemini-2.5-pro"


# --- faults -----------------------------------------------------------------------------

FAULTS = [
    (fg.invalid_api_key(), AuthFailed, 400),
    (fg.google_fault(401, "Request had invalid authentication credentials."), AuthFailed, 401),
    (fg.permission_denied(), AuthFailed, 403),
    (fg.rate_limited(message="Quota exceeded for metric"), RateLimited, 429),
    (fg.server_error(), ProviderUnavailable, 500),
    (fg.unavailable(), ProviderUnavailable, 503),
    (fg.google_fault(504, "Deadline expired before operation could complete."),
     ProviderUnavailable, 504),
    (fg.context_too_long(), ContextTooLong, 400),
    (fg.google_fault(400, "* GenerateContentRequest.contents: contents is not specified"),
     BadRequest, 400),
    (fg.google_fault(404, "models/nope is not found for API version v1beta"), BadRequest, 404),
]  # fmt: skip


@pytest.mark.parametrize(("fault", "error_type", "status"), FAULTS)
async def test_http_faults_map_to_our_errors_with_the_provider_message(
    make, fault, error_type, status
):
    with FakeGemini(Scripted([Reply(fault=fault)])) as fake, pytest.raises(error_type) as raised:
        await collect(make(fake).stream(ask()))
    error = raised.value
    assert type(error) is error_type
    assert error.status == status
    assert error.message == fault.body["error"]["message"]
    assert error.provider == "gemini:gemini-2.5-flash"


async def test_rate_limited_twice_then_succeeds_after_honouring_retry_info(make, sleep):
    replies = [
        Reply(fault=fg.rate_limited(retry_delay=2)),
        Reply(fault=fg.rate_limited(retry_delay=0.5)),
        Reply(text="ok"),
    ]
    with FakeGemini(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 3
    assert text_of(events) == "ok"
    assert sleep.delays == [2.0, 0.5]


async def test_a_retry_after_header_counts_too_and_is_capped(make, sleep):
    replies = [
        Reply(fault=fg.google_fault(429, "slow down", headers={"retry-after": "3"})),
        Reply(fault=fg.rate_limited(retry_delay=3600)),
        Reply(text="ok"),
    ]
    with FakeGemini(Scripted(replies)) as fake:
        await collect(make(fake, max_retries=2).stream(ask()))
    assert sleep.delays == [3.0, 60.0]


async def test_server_errors_back_off_with_jitter_then_give_up(make, sleep):
    with FakeGemini(Scripted([Reply(fault=fg.server_error())] * 3)) as fake:
        with pytest.raises(ProviderUnavailable):
            await collect(make(fake, max_retries=2).stream(ask()))
        assert len(fake.requests) == 3
    assert sleep.delays == [0.5, 1.0]  # rand()=0.5 times 1 s, 2 s


async def test_auth_failure_is_not_retried(make, sleep):
    with FakeGemini(Scripted([Reply(fault=fg.invalid_api_key()), Reply(text="ok")])) as fake:
        with pytest.raises(AuthFailed):
            await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 1
    assert sleep.delays == []


async def test_drop_after_text_raises_and_never_repeats_text(make, sleep):
    dropped = Reply(text="one two three four", fault=Fault(drop_after_chunks=2))
    with FakeGemini(Scripted([dropped, Reply(text="one two three four")])) as fake:
        seen = []
        with pytest.raises(ProviderUnavailable, match="dropped"):
            async for event in make(fake, max_retries=3).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "one two "
    assert sleep.delays == []


async def test_drop_before_any_output_is_retried(make):
    replies = [Reply(text="lost", fault=Fault(drop_after_chunks=0)), Reply(text="kept")]
    with FakeGemini(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=1).stream(ask()))
    assert text_of(events) == "kept"


async def test_an_error_event_mid_stream_is_raised_after_the_text(make):
    overloaded = fg.unavailable("The model is overloaded.")
    cut = Reply(text="half of it", fault=Fault(overloaded.status, overloaded.body, at_chunk=2))
    with FakeGemini(Scripted([cut])) as fake:
        seen = []
        with pytest.raises(ProviderUnavailable, match="overloaded"):
            async for event in make(fake, max_retries=2).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "half of "


async def test_stream_without_finish_reason_is_an_early_end(make):
    cut = Reply(text="half an", finish_reason=None)
    with (
        FakeGemini(Scripted([cut])) as fake,
        pytest.raises(ProviderUnavailable, match="ended early"),
    ):
        await collect(make(fake).stream(ask()))


async def test_malformed_chunk(make):
    broken = Reply(text="x", fault=Fault(malformed_chunk=True))
    with FakeGemini(Scripted([broken])) as fake, pytest.raises(MalformedResponse):
        await collect(make(fake).stream(ask()))


async def test_malformed_function_call_finish_is_a_malformed_response(make):
    broken = Reply(finish_reason="MALFORMED_FUNCTION_CALL")
    with FakeGemini(Scripted([broken])) as fake, pytest.raises(MalformedResponse):
        await collect(make(fake).stream(ask()))


async def test_stalled_stream_fails_at_the_read_timeout(make):
    stalled = Reply(text="slow words here", fault=Fault(stall_seconds=10, at_chunk=2))
    with FakeGemini(Scripted([stalled])) as fake:
        started = time.monotonic()
        seen = []
        with pytest.raises(ProviderUnavailable, match="timed out"):
            async for event in make(fake, timeout=0.3).stream(ask()):
                seen.append(event)
    assert time.monotonic() - started < 5
    assert text_of(seen) == "slow words "


async def test_a_closed_port_is_provider_unavailable(sleep):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = GeminiBackend(
        model="m", api_key="k", base_url=f"http://127.0.0.1:{port}", retry=RetryPolicy(0)
    )
    try:
        with pytest.raises(ProviderUnavailable, match="connection error"):
            await collect(backend.stream(ask()))
    finally:
        await backend.aclose()


async def test_the_api_key_never_appears_in_errors(make):
    key = "AIzaSy-live-very-secret-123"
    fault = fg.invalid_api_key(f"API key not valid: {key}.")
    with FakeGemini(Scripted([Reply(fault=fault)])) as fake, pytest.raises(AuthFailed) as raised:
        await collect(make(fake, api_key=key).stream(ask()))
    assert key not in str(raised.value) and key not in repr(raised.value.args)
    assert "***" in str(raised.value)


async def test_stopping_early_leaves_the_backend_usable(make):
    with FakeGemini(Scripted([Reply(text="a b c d"), Reply(text="again")])) as fake:
        backend = make(fake)
        stream = backend.stream(ask())
        async for _event in stream:
            break
        await stream.aclose()
        assert text_of(await collect(backend.stream(ask()))) == "again"


# --- the registry and a team ------------------------------------------------------------


def test_registry_builds_it_with_the_profile_defaults():
    backend = registry.create(BackendConfig(type="gemini"), env={"GEMINI_API_KEY": "k"})
    assert isinstance(backend, GeminiBackend) and backend.name == "gemini:gemini-2.5-flash"


def test_a_missing_key_names_both_variables_and_where_to_put_them():
    with pytest.raises(ConfigError) as raised:
        registry.create(BackendConfig(type="gemini"), env={})
    message = str(raised.value)
    assert "GOOGLE_API_KEY or GEMINI_API_KEY" in message and ".env" in message


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_a_team_of_gemini_agents_answers_votes_and_presents(in_tmp):
    with FakeGemini() as fake:
        backend = {"type": "gemini", "base_url": fake.base_url, "api_key": "k"}
        agents = [
            {"id": f"g{i}", "backend": {**backend, "model": f"gemini-fake-{i}"}} for i in range(3)
        ]
        result = massgen.run("What is 2+2?", config={"agents": agents}, logs=False)
        assert {r["model"] for r in fake.requests} == {f"gemini-fake-{i}" for i in range(3)}
    assert result.ok
    assert result.answer.startswith("Final answer from gemini-fake-")
    assert len(result.votes) == 3 and all(v.target == result.winner for v in result.votes)
    assert result.total_usage.input_tokens > 0


def test_the_shipped_preset_uses_this_type():
    from massgen.config import load_config, resolve_config_arg

    config = load_config(resolve_config_arg("@examples/providers/gemini"))
    assert registry.check(config.agents[0].backend) is None
    assert config.agents[0].backend.type == "gemini"


def test_validation_refuses_typed_params_gemini_does_not_take():
    key, message, _ = registry.check(BackendConfig(type="gemini", reasoning_summary="auto"))
    assert key == "reasoning_summary" and "not a parameter of backend type 'gemini'" in message
    assert registry.check(BackendConfig(type="gemini", thinking_budget=2048)) is None
