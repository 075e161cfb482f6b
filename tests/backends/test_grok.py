"""GrokBackend driven through the real xai-sdk (gRPC) against the loopback FakeXai."""

import json
import socket
import time

import pytest
from backend_support import ask, collect, text_of

import massgen
from massgen.backends import registry
from massgen.backends.grok import GrokBackend, grpc_target
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
from massgen.testing.fake_gemini import google_fault
from massgen.testing.fake_xai import FakeXai


@pytest.fixture
def make(backends):
    """Build GrokBackends against a FakeXai."""
    return backends(GrokBackend, model="grok-4", api_key="xai-test-key")


# --- streaming --------------------------------------------------------------------------


async def test_streams_text_chunk_by_chunk_then_usage_and_finish(make):
    with FakeXai(Scripted([Reply(text="The answer is 42.")])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert [e for e in events if isinstance(e, TextChunk)] == [
        TextChunk("The "),
        TextChunk("answer "),
        TextChunk("is "),
        TextChunk("42."),
    ]
    assert isinstance(events[-2], Usage) and not events[-2].estimated
    assert events[-1] == Finish("stop")


async def test_reasoning_content_comes_before_the_text(make):
    with FakeXai(Scripted([Reply(text="42", reasoning="six times seven")])) as fake:
        events = await collect(make(fake).stream(ask()))
    reasoning = [e for e in events if isinstance(e, ReasoningChunk)]
    assert "".join(e.text for e in reasoning) == "six times seven"
    assert events.index(reasoning[-1]) < events.index(TextChunk("42"))


async def test_tool_calls_keep_the_provider_ids(make):
    calls = [
        ("new_answer", {"content": 'A long answer with "quotes" and unicode: é'}),
        ("vote", {"agent_id": "agent2.1", "reason": "best"}),
    ]
    with FakeXai(Scripted([Reply(tool_calls=calls)])) as fake:
        events = await collect(make(fake).stream(ask()))
    tool_calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in tool_calls] == [
        ("call_fake_0", *calls[0]),
        ("call_fake_1", *calls[1]),
    ]
    assert events[-1] == Finish("tool_calls")


async def test_usage_with_cached_prompt_and_reasoning_tokens(make):
    usage = FakeUsage(
        prompt_tokens=120, completion_tokens=30, cached_tokens=100, reasoning_tokens=12
    )
    with FakeXai(Scripted([Reply(text="ok", usage=usage)])) as fake:
        events = await collect(make(fake).stream(ask()))
    # xAI reports reasoning apart from completion; our output counts both.
    assert Usage(120, 30, reasoning_tokens=12, cached_input_tokens=100) in events


async def test_usage_is_estimated_when_the_server_sends_none(make):
    with FakeXai(Scripted([Reply(text="y" * 40, usage=None)])) as fake:
        events = await collect(make(fake).stream(ask("x" * 400)))
    assert Usage(input_tokens=100, output_tokens=10, estimated=True) in events


async def test_max_length_finish_is_length(make):
    with FakeXai(Scripted([Reply(text="cut", finish_reason="length")])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events[-1] == Finish("length")


# --- what is sent -----------------------------------------------------------------------


async def test_request_carries_history_tools_and_typed_params(make):
    history = (
        Message("system", "Be brief."),
        Message("user", "Add 2 and 3."),
        Message("assistant", "", tool_calls=(ToolCall("c1", "add", '{"a": 2, "b": 3}'),)),
        Message("tool", "5", tool_call_id="c1"),
    )
    tool = ToolSpec("add", "Add numbers.", {"type": "object", "properties": {}})
    params = GenerationParams(temperature=0.2, stop=("END",), seed=7, reasoning_effort="minimal")
    request = Request(messages=history, tools=(tool,), params=GenerationParams(max_tokens=64))
    with FakeXai(Scripted([Reply(text="5")])) as fake:
        await collect(make(fake, params=params).stream(request))
        body = fake.requests[0]
    assert body["model"] == "grok-4"
    assert body["messages"] == [
        {"role": "ROLE_SYSTEM", "content": [{"text": "Be brief."}]},
        {"role": "ROLE_USER", "content": [{"text": "Add 2 and 3."}]},
        {
            "role": "ROLE_ASSISTANT",
            "content": [{"text": ""}],
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "TOOL_CALL_TYPE_CLIENT_SIDE_TOOL",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "ROLE_TOOL", "content": [{"text": "5"}], "tool_call_id": "c1"},
    ]
    (sent_tool,) = body["tools"]
    assert sent_tool["function"]["name"] == "add"
    assert json.loads(sent_tool["function"]["parameters"]) == tool.parameters
    assert (body["temperature"], body["stop"], body["seed"], body["max_tokens"]) == (
        0.2,
        ["END"],
        7,
        64,
    )
    assert body["reasoning_effort"] == "EFFORT_LOW"  # xAI has no "minimal"
    assert "top_p" not in body and "response_format" not in body


async def test_json_schema_becomes_a_response_format(make):
    schema = {"title": "Workflow action", "type": "object", "properties": {}}
    with FakeXai(Scripted([Reply(text="{}")])) as fake:
        await collect(make(fake).stream(ask(json_schema=schema)))
        fmt = fake.requests[0]["response_format"]
    assert fmt["format_type"] == "FORMAT_TYPE_JSON_SCHEMA"
    assert json.loads(fmt["schema"]) == schema


async def test_sends_the_key_as_bearer_metadata_and_names_itself(make):
    with FakeXai(Scripted([Reply(text="ok")])) as fake:
        backend = make(fake, model="grok-3-mini")
        await collect(backend.stream(ask()))
        assert fake.metadata[0]["authorization"] == "Bearer xai-test-key"
    assert backend.name == "grok:grok-3-mini"


# --- endpoints and config ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "target"),
    [
        ("https://api.x.ai", ("api.x.ai", False)),
        ("https://api.x.ai/v1", ("api.x.ai", False)),
        ("https://grok.example.com:8443", ("grok.example.com:8443", False)),
        ("http://127.0.0.1:50051", ("127.0.0.1:50051", True)),
        ("http://localhost:50051", ("localhost:50051", True)),
        ("127.0.0.1:50051", ("127.0.0.1:50051", True)),
        ("grok.example.com:443", ("grok.example.com:443", False)),
    ],
)
def test_base_url_names_the_grpc_target(base_url, target):
    assert grpc_target(base_url) == target


@pytest.mark.parametrize(
    ("base_url", "wording"),
    [
        ("http://api.x.ai:80", "only allowed to a loopback host"),
        ("http://127.0.0.1", "needs a port"),
        ("ftp://api.x.ai", "neither https:// nor http://"),
    ],
)
def test_unusable_base_urls_are_refused(base_url, wording):
    with pytest.raises(ValueError, match=wording):
        grpc_target(base_url)
    with pytest.raises(ConfigError, match=wording):
        GrokBackend(model="grok-4", api_key="k", base_url=base_url)


def test_validation_refuses_extra_body_and_plaintext_to_remote_hosts():
    key, message, fix = registry.check(BackendConfig(type="grok", extra_body={"x": 1}))
    assert key == "extra_body" and "does not accept extra_body" in message
    assert "typed parameters" in fix
    key, message, _ = registry.check(BackendConfig(type="grok", base_url="http://10.0.0.2:1"))
    assert key == "base_url" and "loopback" in message
    key, message, _ = registry.check(BackendConfig(type="grok", base_url="127.0.0.1:50051"))
    assert key == "base_url" and "is not a URL" in message
    assert registry.check(BackendConfig(type="grok", base_url="http://127.0.0.1:50051")) is None
    assert registry.check(BackendConfig(type="grok")) is None


def test_the_constructor_refuses_extra_body_too():
    with pytest.raises(ConfigError, match="extra_body"):
        GrokBackend(model="grok-4", api_key="k", params=GenerationParams(extra_body={"x": 1}))


# --- faults -----------------------------------------------------------------------------

FAULTS = [
    (Fault.unauthorized("Incorrect API key provided: xa***"), AuthFailed),
    (google_fault(403, "The caller does not have permission to use model grok-9"), AuthFailed),
    (Fault.rate_limited(message="Too many requests"), RateLimited),
    (google_fault(500, "Internal error while sampling"), ProviderUnavailable),
    (google_fault(503, "Service temporarily unavailable"), ProviderUnavailable),
    (google_fault(504, "Deadline exceeded"), ProviderUnavailable),
    (google_fault(400, "This model's maximum prompt length is 131072 but the request contains "
                       "140000 tokens."), ContextTooLong),
    (google_fault(400, "temperature must be at most 2"), BadRequest),
    (google_fault(404, "The model grok-9 does not exist"), BadRequest),
]  # fmt: skip


@pytest.mark.parametrize(("fault", "error_type"), FAULTS)
async def test_grpc_statuses_map_to_our_errors_with_the_provider_message(make, fault, error_type):
    with FakeXai(Scripted([Reply(fault=fault)])) as fake, pytest.raises(error_type) as raised:
        await collect(make(fake).stream(ask()))
    error = raised.value
    assert type(error) is error_type
    assert error.message.endswith(fault.body["error"]["message"])
    assert error.provider == "grok:grok-4"
    assert error.status is None  # a gRPC status, not an HTTP one


async def test_rate_limited_twice_then_succeeds_after_honouring_retry_info(make, sleep):
    replies = [
        Reply(fault=google_fault(429, "slow down", retry_delay=2)),
        Reply(fault=Fault.rate_limited(0.5)),
        Reply(text="ok"),
    ]
    with FakeXai(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 3
    assert text_of(events) == "ok"
    assert sleep.delays == [2.0, 0.5]


async def test_server_errors_back_off_with_jitter_then_give_up(make, sleep):
    with FakeXai(Scripted([Reply(fault=google_fault(503, "busy"))] * 3)) as fake:
        with pytest.raises(ProviderUnavailable):
            await collect(make(fake, max_retries=2).stream(ask()))
        assert len(fake.requests) == 3
    assert sleep.delays == [0.5, 1.0]


async def test_auth_failure_is_not_retried(make, sleep):
    with FakeXai(Scripted([Reply(fault=Fault.unauthorized()), Reply(text="ok")])) as fake:
        with pytest.raises(AuthFailed):
            await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 1
    assert sleep.delays == []


async def test_drop_after_text_raises_and_never_repeats_text(make, sleep):
    dropped = Reply(text="one two three four", fault=Fault(drop_after_chunks=2))
    with FakeXai(Scripted([dropped, Reply(text="one two three four")])) as fake:
        seen = []
        with pytest.raises(ProviderUnavailable, match="reset"):
            async for event in make(fake, max_retries=3).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "one two "
    assert sleep.delays == []


async def test_drop_before_any_output_is_retried(make):
    replies = [Reply(text="lost", fault=Fault(drop_after_chunks=0)), Reply(text="kept")]
    with FakeXai(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=1).stream(ask()))
    assert text_of(events) == "kept"


async def test_a_status_mid_stream_is_raised_after_the_text(make):
    busy = google_fault(500, "sampler crashed")
    cut = Reply(text="half of it", fault=Fault(busy.status, busy.body, at_chunk=2))
    with FakeXai(Scripted([cut])) as fake:
        seen = []
        with pytest.raises(ProviderUnavailable, match="sampler crashed"):
            async for event in make(fake, max_retries=2).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "half of "


async def test_stream_without_finish_reason_is_an_early_end(make):
    cut = Reply(text="half an", finish_reason=None)
    with FakeXai(Scripted([cut])) as fake, pytest.raises(ProviderUnavailable, match="ended early"):
        await collect(make(fake).stream(ask()))


async def test_malformed_chunk(make):
    broken = Reply(text="x y", fault=Fault(malformed_chunk=True, at_chunk=1))
    with FakeXai(Scripted([broken])) as fake, pytest.raises(MalformedResponse):
        await collect(make(fake).stream(ask()))


async def test_stalled_stream_fails_at_the_chunk_timeout(make):
    stalled = Reply(text="slow words here", fault=Fault(stall_seconds=10, at_chunk=2))
    with FakeXai(Scripted([stalled])) as fake:
        started = time.monotonic()
        seen = []
        backend = make(fake, timeout=0.3)
        with pytest.raises(ProviderUnavailable, match="timed out"):
            async for event in backend.stream(ask()):
                seen.append(event)
        await backend.aclose()  # before the server goes: no GOAWAY noise in the log
    assert time.monotonic() - started < 5
    assert text_of(seen) == "slow words "


async def test_a_closed_port_is_provider_unavailable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = GrokBackend(
        model="grok-4", api_key="k", base_url=f"http://127.0.0.1:{port}", retry=RetryPolicy(0)
    )
    try:
        with pytest.raises(ProviderUnavailable):
            await collect(backend.stream(ask()))
    finally:
        await backend.aclose()


async def test_the_api_key_never_appears_in_errors(make):
    key = "xai-live-very-secret-123"
    fault = Fault.unauthorized(f"Incorrect API key provided: {key}.")
    with FakeXai(Scripted([Reply(fault=fault)])) as fake, pytest.raises(AuthFailed) as raised:
        await collect(make(fake, api_key=key).stream(ask()))
    assert key not in str(raised.value) and key not in repr(raised.value.args)
    assert "***" in str(raised.value)


async def test_stopping_early_leaves_the_backend_usable(make):
    with FakeXai(Scripted([Reply(text="a b c d"), Reply(text="again")])) as fake:
        backend = make(fake)
        stream = backend.stream(ask())
        async for _event in stream:
            break
        await stream.aclose()
        assert text_of(await collect(backend.stream(ask()))) == "again"


# --- the registry and a team ------------------------------------------------------------


def test_registry_builds_it_with_the_profile_defaults():
    backend = registry.create(BackendConfig(type="grok"), env={"XAI_API_KEY": "k"})
    assert isinstance(backend, GrokBackend) and backend.name == "grok:grok-4"


def test_a_missing_key_names_the_variable_and_where_to_put_it():
    with pytest.raises(ConfigError) as raised:
        registry.create(BackendConfig(type="grok"), env={})
    message = str(raised.value)
    assert "XAI_API_KEY" in message and ".env" in message


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_a_team_of_grok_agents_answers_votes_and_presents(in_tmp):
    with FakeXai() as fake:
        backend = {"type": "grok", "base_url": fake.base_url, "api_key": "k"}
        agents = [
            {"id": f"x{i}", "backend": {**backend, "model": f"grok-fake-{i}"}} for i in range(3)
        ]
        result = massgen.run("What is 2+2?", config={"agents": agents}, logs=False)
        assert {r["model"] for r in fake.requests} == {f"grok-fake-{i}" for i in range(3)}
    assert result.ok
    assert result.answer.startswith("Final answer from grok-fake-")
    assert len(result.votes) == 3 and all(v.target == result.winner for v in result.votes)
    assert result.total_usage.input_tokens > 0


def test_the_shipped_preset_uses_this_type():
    from massgen.config import load_config, resolve_config_arg

    config = load_config(resolve_config_arg("@examples/providers/grok"))
    assert registry.check(config.agents[0].backend) is None
    assert config.agents[0].backend.type == "grok"


@pytest.mark.parametrize(
    "param", [{"thinking_budget": 2048}, {"reasoning_summary": "auto"}], ids=lambda p: next(iter(p))
)
def test_validation_refuses_typed_params_grok_does_not_take(param):
    key, message, _ = registry.check(BackendConfig(type="grok", **param))
    assert key == next(iter(param)) and "not a parameter of backend type 'grok'" in message
