"""ResponsesBackend (types openai, azure_openai) through the real openai SDK against the
loopback Responses fake: streaming, reasoning summaries, function calls, usage, faults."""

import json
import socket

import pytest
from backend_support import ask, collect, text_of

from massgen.backends import registry
from massgen.backends.responses import ResponsesBackend
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
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.http_fake import stream_error

KEY = "sk-test-key-123"


@pytest.fixture
def make(backends):
    """Build ResponsesBackends against a FakeResponses."""
    return backends(ResponsesBackend, model="gpt-5", api_key=KEY)


# --- streaming --------------------------------------------------------------------------


async def test_streams_reasoning_summary_then_text_then_usage_and_finish(make):
    usage = FakeUsage(
        prompt_tokens=120, completion_tokens=30, cached_tokens=100, reasoning_tokens=12
    )
    reply = Reply(text="The answer is 42.", reasoning="six times seven", usage=usage)
    with FakeResponses(Scripted([reply])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events == [
        ReasoningChunk("six "),
        ReasoningChunk("times "),
        ReasoningChunk("seven"),
        TextChunk("The "),
        TextChunk("answer "),
        TextChunk("is "),
        TextChunk("42."),
        Usage(120, 30, reasoning_tokens=12, cached_input_tokens=100),
        Finish("stop"),
    ]


async def test_function_calls_come_whole_with_their_call_ids(make):
    calls = [
        ("new_answer", {"content": 'A long answer with "quotes" and unicode: é'}),
        ("vote", {"agent_id": "agent2.1", "reason": "best"}),
    ]
    with FakeResponses(Scripted([Reply(tool_calls=calls)])) as fake:
        events = await collect(make(fake).stream(ask()))
    tool_calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in tool_calls] == [
        ("call_fake_0", *calls[0]),
        ("call_fake_1", *calls[1]),
    ]
    assert events[-1] == Finish("tool_calls")


async def test_an_incomplete_response_finishes_with_length(make):
    with FakeResponses(Scripted([Reply(text="cut", finish_reason="length")])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events[-1] == Finish("length")


# --- what is sent -----------------------------------------------------------------------


async def test_payload_uses_input_items_instructions_and_typed_params(make):
    history = (
        Message("system", "Be brief."),
        Message("user", "Add 2 and 3."),
        Message("assistant", "", tool_calls=(ToolCall("c1", "add", '{"a": 2, "b": 3}'),)),
        Message("tool", "5", tool_call_id="c1"),
    )
    tool = ToolSpec("add", "Add numbers.", {"type": "object", "properties": {}})
    defaults = GenerationParams(temperature=0.2, reasoning_effort="low", extra_body={"x": 1})
    request = Request(messages=history, tools=(tool,), params=GenerationParams(max_tokens=64))
    with FakeResponses(Scripted([Reply(text="5")])) as fake:
        await collect(make(fake, params=defaults, reasoning_summary="auto").stream(request))
        body = fake.requests[0]
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"role": "user", "content": "Add 2 and 3."},
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'},
        {"type": "function_call_output", "call_id": "c1", "output": "5"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "add",
            "description": "Add numbers.",
            "parameters": tool.parameters,
            "strict": False,
        }
    ]
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert (body["temperature"], body["max_output_tokens"], body["x"]) == (0.2, 64, 1)
    assert body["stream"] is True and body["store"] is False
    assert not {"max_tokens", "seed", "stop", "top_p", "text"} & set(body)


async def test_json_schema_becomes_the_text_format(make):
    schema = {"title": "Workflow action", "type": "object", "properties": {}}
    with FakeResponses(Scripted([Reply(text="{}")])) as fake:
        await collect(make(fake).stream(ask(json_schema=schema)))
        body = fake.requests[0]
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Workflow_action",
            "schema": schema,
            "strict": False,
        }
    }


async def test_sends_the_key_as_bearer_to_the_configured_base_url(make):
    with FakeResponses(Scripted([Reply(text="ok")])) as fake:
        backend = make(fake, model="gpt-5-mini")
        await collect(backend.stream(ask()))
        assert fake.headers[0]["authorization"] == f"Bearer {KEY}"
        assert fake.paths == ["/v1/responses"]
    assert backend.name == "openai:gpt-5-mini"


# --- faults -----------------------------------------------------------------------------

FAULTS = [
    (Fault.unauthorized("Incorrect API key provided: sk-te***"), AuthFailed, 401),
    (Fault.http(403, "Project does not have access to model gpt-5"), AuthFailed, 403),
    (Fault.rate_limited(message="Rate limit reached for gpt-5"), RateLimited, 429),
    (Fault.server_error("The server had an error"), ProviderUnavailable, 500),
    (Fault.http(503, "Service unavailable"), ProviderUnavailable, 503),
    (Fault.context_length_exceeded(), ContextTooLong, 400),
    (Fault.http(400, "Unsupported parameter: 'temperature'"), BadRequest, 400),
]


@pytest.mark.parametrize(("fault", "error_type", "status"), FAULTS)
async def test_http_faults_map_to_our_errors_with_the_provider_message(
    make, fault, error_type, status
):
    with FakeResponses(Scripted([Reply(fault=fault)])) as fake, pytest.raises(error_type) as raised:
        await collect(make(fake).stream(ask()))
    assert type(raised.value) is error_type
    assert raised.value.status == status
    assert raised.value.message == fault.body["error"]["message"]
    assert raised.value.provider == "openai:gpt-5"


async def test_rate_limited_twice_then_succeeds_after_honouring_retry_after(make, sleep):
    replies = [
        Reply(fault=Fault.rate_limited(2)),
        Reply(fault=Fault.rate_limited(0.5)),
        Reply(text="ok"),
    ]
    with FakeResponses(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 3
    assert text_of(events) == "ok"
    assert sleep.delays == [2.0, 0.5]


async def test_server_errors_back_off_exponentially_with_jitter_then_give_up(make, sleep):
    replies = [Reply(fault=Fault.server_error()) for _ in range(3)]
    with FakeResponses(Scripted(replies)) as fake, pytest.raises(ProviderUnavailable):
        await collect(make(fake, max_retries=2).stream(ask()))
    assert sleep.delays == [0.5, 1.0]  # rand() = 0.5 of 1 s, then of 2 s


async def test_auth_failure_is_never_retried(make, sleep):
    with FakeResponses(Scripted([Reply(fault=Fault.unauthorized())])) as fake:
        with pytest.raises(AuthFailed):
            await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 1
    assert sleep.delays == []


async def test_a_stream_dropped_mid_answer_is_not_retried_and_text_is_not_repeated(make):
    replies = [Reply(text="one two three four", fault=Fault(drop_after_chunks=6)), Reply(text="x")]
    with FakeResponses(Scripted(replies)) as fake:
        seen: list = []
        with pytest.raises(ProviderUnavailable):
            async for event in make(fake, max_retries=3).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "one two "  # the words sent before the drop, once


async def test_a_stream_dropped_before_any_text_is_retried(make, sleep):
    replies = [Reply(text="late", fault=Fault(drop_after_chunks=1)), Reply(text="ok")]
    with FakeResponses(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=1).stream(ask()))
    assert text_of(events) == "ok" and len(sleep.delays) == 1


async def test_a_malformed_event_is_a_malformed_response(make):
    reply = Reply(text="hello there", fault=Fault(malformed_chunk=True, at_chunk=2))
    with FakeResponses(Scripted([reply])) as fake, pytest.raises(MalformedResponse):
        await collect(make(fake).stream(ask()))


async def test_a_stream_without_completion_ended_early(make):
    reply = Reply(text="hi", finish_reason=None)
    with (
        FakeResponses(Scripted([reply])) as fake,
        pytest.raises(ProviderUnavailable, match="early"),
    ):
        await collect(make(fake).stream(ask()))


async def test_response_failed_inside_the_stream_keeps_the_provider_message(make):
    fault = stream_error("The model crashed mid-way", "server_error", at_chunk=3)
    expected = pytest.raises(ProviderUnavailable, match="The model crashed mid-way")
    with FakeResponses(Scripted([Reply(text="a b c d", fault=fault)])) as fake, expected:
        await collect(make(fake).stream(ask()))


async def test_a_stalled_stream_hits_the_read_timeout(make):
    reply = Reply(text="slow", fault=Fault(stall_seconds=5, at_chunk=2))
    with FakeResponses(Scripted([reply])) as fake, pytest.raises(ProviderUnavailable):
        await collect(make(fake, timeout=0.3).stream(ask()))


async def test_a_refused_connection_is_provider_unavailable(make):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with FakeResponses() as fake:
        backend = make(fake, base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ProviderUnavailable):
        await collect(backend.stream(ask()))


async def test_the_key_is_scrubbed_from_provider_messages(make):
    fault = Fault.unauthorized(f"Incorrect API key provided: {KEY}")
    with FakeResponses(Scripted([Reply(fault=fault)])) as fake, pytest.raises(AuthFailed) as raised:
        await collect(make(fake).stream(ask()))
    assert KEY not in str(raised.value) and "***" in raised.value.message


# --- Azure ------------------------------------------------------------------------------


async def test_azure_sends_the_deployment_api_version_and_api_key_header(make):
    with FakeResponses(Scripted([Reply(text="hi")])) as fake:
        backend = make(
            fake,
            model="my-gpt5-deployment",
            base_url=fake.azure_endpoint,
            azure_api_version="2025-04-01-preview",
            provider="azure_openai",
        )
        assert text_of(await collect(backend.stream(ask()))) == "hi"
        assert fake.paths == ["/openai/responses?api-version=2025-04-01-preview"]
        assert fake.headers[0]["api-key"] == KEY
        assert fake.requests[0]["model"] == "my-gpt5-deployment"


async def test_azure_endpoint_deployment_and_version_come_from_the_environment():
    with FakeResponses(Scripted([Reply(text="from env")])) as fake:
        env = {
            "AZURE_OPENAI_API_KEY": "az-key-1",
            "AZURE_OPENAI_ENDPOINT": fake.azure_endpoint,
            "AZURE_OPENAI_DEPLOYMENT_NAME": "dep-1",
            "AZURE_OPENAI_API_VERSION": "2025-03-01-preview",
        }
        backend = registry.create(BackendConfig(type="azure_openai", max_retries=0), env=env)
        try:
            assert text_of(await collect(backend.stream(ask()))) == "from env"
        finally:
            await backend.aclose()
        assert fake.paths == ["/openai/responses?api-version=2025-03-01-preview"]
        assert fake.requests[0]["model"] == "dep-1"


def test_azure_without_an_endpoint_names_the_variable():
    assert registry.check(BackendConfig(type="azure_openai")) is None  # may come from env
    with pytest.raises(ConfigError) as raised:
        registry.create(
            BackendConfig(type="azure_openai", model="d"), env={"AZURE_OPENAI_API_KEY": "k"}
        )
    assert "AZURE_OPENAI_ENDPOINT" in raised.value.render()


# --- through the registry ---------------------------------------------------------------


async def test_openai_type_honours_base_url_and_the_env_key():
    with FakeResponses(Scripted([Reply(text="ok")])) as fake:
        cfg = BackendConfig(type="openai", base_url=fake.base_url, max_retries=0)
        backend = registry.create(cfg, env={"OPENAI_API_KEY": "sk-env"})
        try:
            await collect(backend.stream(ask()))
        finally:
            await backend.aclose()
        assert fake.headers[0]["authorization"] == "Bearer sk-env"
        assert fake.requests[0]["model"] == "gpt-5.2"  # the profile's default model


def test_a_missing_openai_key_says_which_variable_and_where_to_put_it():
    with pytest.raises(ConfigError) as raised:
        registry.create(BackendConfig(type="openai"), env={})
    text = raised.value.render()
    for part in ("OPENAI_API_KEY", ".env", "~/.config/massgen/.env", "massgen --setup"):
        assert part in text


@pytest.mark.parametrize("param", [{"seed": 1}, {"stop": ["x"]}, {"thinking_budget": 2048}])
def test_parameters_the_responses_api_lacks_are_refused(param):
    key, message, fix = registry.check(BackendConfig(type="openai", **param))
    assert key == next(iter(param)) and "not a parameter" in message and "extra_body" in fix
