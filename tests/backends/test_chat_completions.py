"""ChatCompletionsBackend driven through the real openai SDK against the loopback fake."""

import json
import time

import pytest
from backend_support import ask, collect, text_of

from massgen.core.errors import (
    AuthFailed,
    BadRequest,
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
from massgen.testing import FakeProvider, FakeUsage, Fault, Reply, Scripted

# --- streaming --------------------------------------------------------------------------


async def test_streams_text_word_by_word_then_usage_and_finish(make_backend):
    with FakeProvider(Scripted([Reply(text="The answer is 42.")])) as fp:
        events = await collect(make_backend(fp).stream(ask()))
    assert [e for e in events if isinstance(e, TextChunk)] == [
        TextChunk("The "),
        TextChunk("answer "),
        TextChunk("is "),
        TextChunk("42."),
    ]
    assert isinstance(events[-2], Usage) and not events[-2].estimated
    assert events[-1] == Finish("stop")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_deltas_from_either_extra_field(make_backend, field):
    reply = Reply(text="42", reasoning="six times seven", reasoning_field=field)
    with FakeProvider(Scripted([reply])) as fp:
        events = await collect(make_backend(fp).stream(ask()))
    reasoning = [e for e in events if isinstance(e, ReasoningChunk)]
    assert "".join(e.text for e in reasoning) == "six times seven"
    assert events.index(reasoning[-1]) < events.index(TextChunk("42"))


async def test_tool_calls_are_assembled_from_split_deltas(make_backend):
    calls = [
        ("new_answer", {"content": 'A long answer with "quotes" and unicode: é'}),
        ("vote", {"agent_id": "agent2.1", "reason": "best"}),
    ]
    with FakeProvider(Scripted([Reply(tool_calls=calls)])) as fp:
        events = await collect(make_backend(fp).stream(ask()))
    tool_calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in tool_calls] == [
        ("call_fake_0", *calls[0]),
        ("call_fake_1", *calls[1]),
    ]
    assert events[-1] == Finish("tool_calls")


async def test_usage_with_cached_and_reasoning_details(make_backend):
    usage = FakeUsage(
        prompt_tokens=120, completion_tokens=30, cached_tokens=100, reasoning_tokens=12
    )
    with FakeProvider(Scripted([Reply(text="ok", usage=usage)])) as fp:
        events = await collect(make_backend(fp).stream(ask()))
    assert Usage(120, 30, reasoning_tokens=12, cached_input_tokens=100) in events


async def test_usage_is_estimated_when_the_server_sends_none(make_backend):
    prompt = "x" * 400
    with FakeProvider(Scripted([Reply(text="y" * 40, usage=None)])) as fp:
        events = await collect(make_backend(fp).stream(ask(prompt)))
    assert Usage(input_tokens=100, output_tokens=10, estimated=True) in events


# --- what is sent -----------------------------------------------------------------------


async def test_request_payload_uses_typed_params_and_the_function_dialect(make_backend):
    history = (
        Message("system", "Be brief."),
        Message("user", "Add 2 and 3."),
        Message("assistant", "", tool_calls=(ToolCall("c1", "add", '{"a": 2, "b": 3}'),)),
        Message("tool", "5", tool_call_id="c1"),
    )
    tool = ToolSpec("add", "Add numbers.", {"type": "object", "properties": {}})
    params = GenerationParams(temperature=0.2, stop=("END",), extra_body={"top_k": 5})
    request = Request(messages=history, tools=(tool,), params=GenerationParams(max_tokens=64))
    with FakeProvider(Scripted([Reply(text="5")])) as fp:
        await collect(make_backend(fp, params=params).stream(request))
        body = fp.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Add 2 and 3."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "5"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add numbers.",
                "parameters": tool.parameters,
            },
        }
    ]
    assert (body["temperature"], body["stop"], body["max_tokens"], body["top_k"]) == (
        0.2,
        ["END"],
        64,
        5,
    )
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert "top_p" not in body and "response_format" not in body


async def test_json_schema_becomes_response_format(make_backend):
    schema = {"title": "Workflow action", "type": "object", "properties": {}}
    with FakeProvider(Scripted([Reply(text="{}")])) as fp:
        await collect(make_backend(fp).stream(ask(json_schema=schema)))
        body = fp.requests[0]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Workflow_action", "schema": schema},
    }


async def test_sends_the_key_as_bearer_and_names_itself(make_backend):
    with FakeProvider(Scripted([Reply(text="ok")])) as fp:
        backend = make_backend(fp, model="llama-3.3-70b", provider="groq")
        await collect(backend.stream(ask()))
        assert fp.headers[0]["authorization"] == "Bearer sk-test-key"
    assert backend.name == "groq:llama-3.3-70b"


# --- faults -----------------------------------------------------------------------------

FAULTS = [
    (Fault.unauthorized("Incorrect API key provided: sk-te***"), AuthFailed, 401),
    (Fault.http(403, "Project does not have access to model"), AuthFailed, 403),
    (Fault.rate_limited(message="Slow down, please"), RateLimited, 429),
    (Fault.server_error("Upstream overloaded"), ProviderUnavailable, 500),
    (Fault.http(503, "Service unavailable"), ProviderUnavailable, 503),
    (Fault.context_length_exceeded(), ContextTooLong, 400),
    (Fault.http(400, "prompt is too long: 210000 tokens > 200000 maximum"), ContextTooLong, 400),
    (Fault.http(400, "temperature must be at most 2"), BadRequest, 400),
    (Fault.http(404, "The model `nope` does not exist"), BadRequest, 404),
]


@pytest.mark.parametrize(("fault", "error_type", "status"), FAULTS)
async def test_http_faults_map_to_our_errors_with_the_provider_message(
    make_backend, fault, error_type, status
):
    with FakeProvider(Scripted([Reply(fault=fault)])) as fp, pytest.raises(error_type) as raised:
        await collect(make_backend(fp, provider="groq").stream(ask()))
    error = raised.value
    assert type(error) is error_type
    assert error.status == status
    assert error.message == fault.body["error"]["message"]
    assert error.provider == "groq:fake-model"


async def test_rate_limited_twice_then_succeeds_after_honouring_retry_after(make_backend, sleep):
    replies = [
        Reply(fault=Fault.rate_limited(2)),
        Reply(fault=Fault.rate_limited(0.5)),
        Reply(text="ok"),
    ]
    with FakeProvider(Scripted(replies)) as fp:
        events = await collect(make_backend(fp, max_retries=3).stream(ask()))
        assert len(fp.requests) == 3
    assert text_of(events) == "ok"
    assert sleep.delays == [2.0, 0.5]


async def test_retry_after_ms_and_cap(make_backend, sleep):
    replies = [
        Reply(fault=Fault.http(429, "slow", headers={"retry-after-ms": "1500"})),
        Reply(fault=Fault.rate_limited(3600)),
        Reply(text="ok"),
    ]
    with FakeProvider(Scripted(replies)) as fp:
        await collect(make_backend(fp, max_retries=2).stream(ask()))
    assert sleep.delays == [1.5, 60.0]


async def test_server_errors_back_off_with_jitter_then_give_up(make_backend, sleep):
    replies = [Reply(fault=Fault.server_error())] * 3
    with FakeProvider(Scripted(replies)) as fp:
        with pytest.raises(ProviderUnavailable):
            await collect(make_backend(fp, max_retries=2).stream(ask()))
        assert len(fp.requests) == 3
    assert sleep.delays == [0.5, 1.0]  # rand()=0.5 times 1 s, 2 s


async def test_auth_failure_is_not_retried(make_backend, sleep):
    with FakeProvider(Scripted([Reply(fault=Fault.unauthorized()), Reply(text="ok")])) as fp:
        with pytest.raises(AuthFailed):
            await collect(make_backend(fp, max_retries=3).stream(ask()))
        assert len(fp.requests) == 1
    assert sleep.delays == []


async def test_drop_after_text_raises_and_never_repeats_text(make_backend, sleep):
    dropped = Reply(text="one two three four", fault=Fault(drop_after_chunks=3))
    with FakeProvider(Scripted([dropped, Reply(text="one two three four")])) as fp:
        seen = []
        with pytest.raises(ProviderUnavailable):
            async for event in make_backend(fp, max_retries=3).stream(ask()):
                seen.append(event)
        assert len(fp.requests) == 1
    assert text_of(seen) == "one two "
    assert sleep.delays == []


async def test_drop_before_any_output_is_retried(make_backend):
    replies = [Reply(text="lost", fault=Fault(drop_after_chunks=0)), Reply(text="kept")]
    with FakeProvider(Scripted(replies)) as fp:
        events = await collect(make_backend(fp, max_retries=1).stream(ask()))
    assert text_of(events) == "kept"


async def test_stream_without_finish_reason_is_an_early_end(make_backend):
    cut = Reply(text="half an", finish_reason=None)
    with (
        FakeProvider(Scripted([cut])) as fp,
        pytest.raises(ProviderUnavailable, match="ended early"),
    ):
        await collect(make_backend(fp).stream(ask()))


async def test_malformed_chunk(make_backend):
    broken = Reply(text="x", fault=Fault(malformed_chunk=True))
    with FakeProvider(Scripted([broken])) as fp, pytest.raises(MalformedResponse):
        await collect(make_backend(fp).stream(ask()))


async def test_stalled_stream_fails_at_the_read_timeout(make_backend):
    stalled = Reply(text="slow words here", fault=Fault(stall_seconds=10, at_chunk=2))
    with FakeProvider(Scripted([stalled])) as fp:
        started = time.monotonic()
        seen = []
        with pytest.raises(ProviderUnavailable, match="timed out"):
            async for event in make_backend(fp, timeout=0.3).stream(ask()):
                seen.append(event)
    assert time.monotonic() - started < 5
    assert text_of(seen) == "slow "


async def test_the_api_key_never_appears_in_errors(make_backend):
    key = "sk-live-very-secret-123"
    fault = Fault.unauthorized(f"Incorrect API key provided: {key}.")
    with FakeProvider(Scripted([Reply(fault=fault)])) as fp, pytest.raises(AuthFailed) as raised:
        await collect(make_backend(fp, api_key=key).stream(ask()))
    assert key not in str(raised.value) and key not in repr(raised.value.args)
    assert "***" in str(raised.value)


async def test_stopping_early_leaves_the_backend_usable(make_backend):
    with FakeProvider(Scripted([Reply(text="a b c d"), Reply(text="again")])) as fp:
        backend = make_backend(fp)
        stream = backend.stream(ask())
        async for _event in stream:
            break
        await stream.aclose()
        assert text_of(await collect(backend.stream(ask()))) == "again"
