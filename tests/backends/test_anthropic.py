"""AnthropicBackend (type claude) through the real anthropic SDK against the loopback
Messages fake: streaming, thinking, tool use, cache usage, faults, retries."""

import json

import pytest
from backend_support import ask, collect, text_of

from massgen.backends import registry
from massgen.backends.anthropic_messages import AnthropicBackend
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
from massgen.testing.fake_anthropic import SIGNATURE, FakeAnthropic
from massgen.testing.http_fake import stream_error

KEY = "sk-ant-test-key-123"
TOOL = ToolSpec("vote", "Vote for an answer.", {"type": "object", "properties": {}})


@pytest.fixture
def make(backends):
    """Build AnthropicBackends against a FakeAnthropic."""
    return backends(AnthropicBackend, model="claude-sonnet-4-6", api_key=KEY)


# --- streaming --------------------------------------------------------------------------


async def test_streams_thinking_then_text_then_usage_with_cache_reads(make):
    usage = FakeUsage(prompt_tokens=1200, completion_tokens=30, cached_tokens=1000)
    reply = Reply(text="The answer is 42.", reasoning="six times seven", usage=usage)
    with FakeAnthropic(Scripted([reply])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events == [
        ReasoningChunk("six "),
        ReasoningChunk("times "),
        ReasoningChunk("seven"),
        TextChunk("The "),
        TextChunk("answer "),
        TextChunk("is "),
        TextChunk("42."),
        # Anthropic counts cache reads apart from input_tokens; we add them back in.
        Usage(input_tokens=1200, output_tokens=30, cached_input_tokens=1000),
        Finish("stop"),
    ]


async def test_tool_use_blocks_become_tool_calls_with_json_arguments(make):
    calls = [
        ("new_answer", {"content": 'A long answer with "quotes" and unicode: é'}),
        ("vote", {"agent_id": "agent2.1", "reason": "best"}),
    ]
    with FakeAnthropic(Scripted([Reply(tool_calls=calls)])) as fake:
        events = await collect(make(fake).stream(ask(tools=(TOOL,))))
    tool_calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in tool_calls] == [
        ("toolu_fake_0", *calls[0]),
        ("toolu_fake_1", *calls[1]),
    ]
    assert events[-1] == Finish("tool_calls")


async def test_max_tokens_stop_is_a_length_finish(make):
    with FakeAnthropic(Scripted([Reply(text="cut", finish_reason="length")])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events[-1] == Finish("length")


# --- what is sent -----------------------------------------------------------------------


async def test_payload_has_system_tool_use_and_tool_result_blocks(make):
    history = (
        Message("system", "Be brief."),
        Message("user", "Add 2 and 3."),
        Message("assistant", "Adding.", tool_calls=(ToolCall("t1", "add", '{"a": 2}'),)),
        Message("tool", "5", tool_call_id="t1"),
        Message("user", "Now answer."),
    )
    params = GenerationParams(temperature=0.2, stop=("END",), extra_body={"top_k": 5})
    request = Request(messages=history, tools=(TOOL,), params=GenerationParams(max_tokens=64))
    with FakeAnthropic(Scripted([Reply(text="5")])) as fake:
        await collect(make(fake, params=params).stream(request))
        body = fake.requests[0]
    assert body["system"] == "Be brief."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Add 2 and 3."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Adding."},
                {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "5"},
                {"type": "text", "text": "Now answer."},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "vote", "description": "Vote for an answer.", "input_schema": TOOL.parameters}
    ]
    assert (body["max_tokens"], body["temperature"], body["stop_sequences"], body["top_k"]) == (
        64,
        0.2,
        ["END"],
        5,
    )
    assert body["stream"] is True and "thinking" not in body


async def test_max_tokens_has_a_default_because_the_api_requires_it(make):
    with FakeAnthropic(Scripted([Reply(text="ok")])) as fake:
        await collect(make(fake).stream(ask()))
        assert fake.requests[0]["max_tokens"] == 8192


async def test_thinking_budget_and_the_signed_thinking_go_back_with_the_tool_call(make):
    first = Reply(reasoning="I should vote.", tool_calls=[("vote", {"agent_id": "a1"})])
    with FakeAnthropic(Scripted([first, Reply(text="done")])) as fake:
        backend = make(fake, thinking_budget=2048)
        events = await collect(backend.stream(ask(tools=(TOOL,))))
        call = next(e for e in events if isinstance(e, ToolCall))
        follow_up = (
            *ask(tools=(TOOL,)).messages,
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "Error: try again", tool_call_id=call.id),
        )
        await collect(backend.stream(Request(follow_up, (TOOL,))))
        first_body, second_body = fake.requests
    assert first_body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first_body["max_tokens"] == 8192 + 2048
    assistant = second_body["messages"][1]["content"]
    assert assistant[0] == {
        "type": "thinking",
        "thinking": "I should vote.",
        "signature": SIGNATURE,
    }
    assert assistant[1]["type"] == "tool_use" and assistant[1]["id"] == call.id


async def test_reasoning_effort_and_json_schema_go_in_output_config(make):
    schema = {"type": "object", "properties": {"action": {"type": "string"}}}
    request = ask(json_schema=schema, params=GenerationParams(reasoning_effort="high"))
    with FakeAnthropic(Scripted([Reply(text="{}")])) as fake:
        await collect(make(fake).stream(request))
        body = fake.requests[0]
    assert body["output_config"] == {
        "format": {"type": "json_schema", "schema": schema},
        "effort": "high",
    }


async def test_sends_the_key_to_the_configured_base_url(make):
    with FakeAnthropic(Scripted([Reply(text="ok")])) as fake:
        backend = make(fake)
        await collect(backend.stream(ask()))
        headers = fake.headers[0]
        assert KEY in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
        assert fake.paths == ["/v1/messages"]
    assert backend.name == "claude:claude-sonnet-4-6"


# --- faults -----------------------------------------------------------------------------

FAULTS = [
    (Fault.unauthorized("invalid x-api-key"), AuthFailed, 401),
    (Fault.http(403, "Your API key does not have permission"), AuthFailed, 403),
    (
        Fault.rate_limited(message="Number of requests has exceeded your rate limit"),
        RateLimited,
        429,
    ),
    (Fault.server_error("Internal server error"), ProviderUnavailable, 500),
    (Fault.http(529, "Overloaded"), ProviderUnavailable, 529),
    (Fault.http(400, "max_tokens: must be at most 64000"), BadRequest, 400),
    (Fault.http(404, "model: claude-nope"), BadRequest, 404),
]


@pytest.mark.parametrize(("fault", "error_type", "status"), FAULTS)
async def test_http_faults_map_to_our_errors_with_the_provider_message(
    make, fault, error_type, status
):
    with FakeAnthropic(Scripted([Reply(fault=fault)])) as fake, pytest.raises(error_type) as raised:
        await collect(make(fake).stream(ask()))
    assert type(raised.value) is error_type
    assert raised.value.status == status
    assert raised.value.message == fault.body["error"]["message"]
    assert raised.value.provider == "claude:claude-sonnet-4-6"


async def test_prompt_too_long_is_context_too_long(make):
    with FakeAnthropic(Scripted([Reply(fault=Fault.context_length_exceeded())])) as fake:
        with pytest.raises(ContextTooLong, match="prompt is too long"):
            await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 1


async def test_rate_limited_twice_then_succeeds_after_honouring_retry_after(make, sleep):
    replies = [
        Reply(fault=Fault.rate_limited(3)),
        Reply(fault=Fault.rate_limited(1)),
        Reply(text="ok"),
    ]
    with FakeAnthropic(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 3
    assert text_of(events) == "ok"
    assert sleep.delays == [3.0, 1.0]


async def test_overloaded_event_inside_the_stream_is_provider_unavailable(make):
    fault = stream_error("Overloaded", "overloaded_error", at_chunk=3)
    expected = pytest.raises(ProviderUnavailable, match="Overloaded")
    with FakeAnthropic(Scripted([Reply(text="a b c", fault=fault)])) as fake, expected:
        await collect(make(fake).stream(ask()))


async def test_an_overloaded_stream_before_any_text_is_retried(make, sleep):
    replies = [
        Reply(text="x", fault=stream_error("Overloaded", "overloaded_error")),
        Reply(text="ok"),
    ]
    with FakeAnthropic(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=2).stream(ask()))
    assert text_of(events) == "ok" and sleep.delays == [0.5]


async def test_a_stream_dropped_mid_answer_is_not_retried(make):
    replies = [Reply(text="one two three", fault=Fault(drop_after_chunks=5)), Reply(text="x")]
    with FakeAnthropic(Scripted(replies)) as fake:
        seen: list = []
        with pytest.raises(ProviderUnavailable, match="interrupted"):
            async for event in make(fake, max_retries=3).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "one two "  # the words sent before the drop, once


async def test_a_malformed_event_is_a_malformed_response(make):
    reply = Reply(text="hello there", fault=Fault(malformed_chunk=True, at_chunk=2))
    with FakeAnthropic(Scripted([reply])) as fake, pytest.raises(MalformedResponse):
        await collect(make(fake).stream(ask()))


async def test_a_stream_without_message_stop_ended_early(make):
    reply = Reply(text="hi", finish_reason=None)
    with (
        FakeAnthropic(Scripted([reply])) as fake,
        pytest.raises(ProviderUnavailable, match="early"),
    ):
        await collect(make(fake).stream(ask()))


async def test_a_stalled_stream_hits_the_read_timeout(make):
    reply = Reply(text="slow", fault=Fault(stall_seconds=5, at_chunk=2))
    with FakeAnthropic(Scripted([reply])) as fake, pytest.raises(ProviderUnavailable):
        await collect(make(fake, timeout=0.3).stream(ask()))


async def test_the_key_is_scrubbed_from_provider_messages(make):
    fault = Fault.unauthorized(f"invalid x-api-key: {KEY}")
    with FakeAnthropic(Scripted([Reply(fault=fault)])) as fake, pytest.raises(AuthFailed) as raised:
        await collect(make(fake).stream(ask()))
    assert KEY not in str(raised.value)


# --- through the registry ---------------------------------------------------------------


async def test_claude_type_honours_base_url_and_the_env_key():
    with FakeAnthropic(Scripted([Reply(text="ok")])) as fake:
        cfg = BackendConfig(type="claude", base_url=fake.base_url, max_retries=0)
        backend = registry.create(cfg, env={"ANTHROPIC_API_KEY": "sk-ant-env"})
        try:
            await collect(backend.stream(ask()))
        finally:
            await backend.aclose()
        headers = fake.headers[0]
        assert "sk-ant-env" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
        assert fake.requests[0]["model"] == "claude-sonnet-4-6"


def test_a_missing_anthropic_key_names_the_variable():
    with pytest.raises(ConfigError) as raised:
        registry.create(BackendConfig(type="claude"), env={})
    assert "ANTHROPIC_API_KEY" in raised.value.render()
    assert "massgen --setup" in raised.value.render()


@pytest.mark.parametrize("param", [{"seed": 1}, {"reasoning_summary": "auto"}])
def test_parameters_the_messages_api_lacks_are_refused(param):
    key, message, _ = registry.check(BackendConfig(type="claude", **param))
    assert key == next(iter(param)) and "not a parameter" in message
