"""AnthropicBackend (type claude) through the real anthropic SDK against the loopback
Messages fake: what is sent, signed thinking, overloaded streams. The contract every
wire keeps (thinking before text, cache usage, finishes, faults) is in test_wire_contract.py."""

import pytest
from backend_support import ask, collect, first_request, text_of

from massgen.backends.anthropic_messages import AnthropicBackend
from massgen.core import errors, types
from massgen.testing import Fault, Reply, Scripted
from massgen.testing.fake_anthropic import SIGNATURE, FakeAnthropic
from massgen.testing.http_fake import stream_error

KEY = "sk-ant-test-key-123"
TOOL = types.ToolSpec("vote", "Vote for an answer.", {"type": "object", "properties": {}})


@pytest.fixture
def make(backends):
    """Build AnthropicBackends against a FakeAnthropic."""
    return backends(AnthropicBackend, provider="claude", model="claude-sonnet-4-6", api_key=KEY)


# --- what is sent -----------------------------------------------------------------------


async def test_payload_has_system_tool_use_and_tool_result_blocks(make):
    history = (
        types.Message("system", "Be brief."),
        types.Message("user", "Add 2 and 3."),
        types.Message(
            "assistant", "Adding.", tool_calls=(types.ToolCall("t1", "add", '{"a": 2}'),)
        ),
        types.Message("tool", "5", tool_call_id="t1"),
        types.Message("user", "Now answer."),
    )
    params = types.GenerationParams(
        temperature=0.2, stop=("END",), extra_body={"top_k": 5}, max_tokens=64
    )
    request = types.Request(messages=history, tools=(TOOL,), params=params)
    body = await first_request(FakeAnthropic, make, request, reply="5")
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
    body = await first_request(FakeAnthropic, make, ask())
    assert body["max_tokens"] == 8192


async def test_thinking_budget_and_the_signed_thinking_go_back_with_the_tool_call(make):
    first = Reply(reasoning="I should vote.", tool_calls=[("vote", {"agent_id": "a1"})])
    with FakeAnthropic(Scripted([first, Reply(text="done")])) as fake:
        backend = make(fake)
        thinking = types.GenerationParams(thinking_budget=2048)
        events = await collect(backend.stream(ask(tools=(TOOL,), params=thinking)))
        call = next(e for e in events if isinstance(e, types.ToolCall))
        follow_up = (
            *ask(tools=(TOOL,)).messages,
            types.Message("assistant", "", tool_calls=(call,)),
            types.Message("tool", "Error: try again", tool_call_id=call.id),
        )
        await collect(backend.stream(types.Request(follow_up, (TOOL,))))
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
    request = ask(json_schema=schema, params=types.GenerationParams(reasoning_effort="high"))
    body = await first_request(FakeAnthropic, make, request, reply="{}")
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


async def test_prompt_too_long_is_context_too_long(make):
    with FakeAnthropic(Scripted([Reply(fault=Fault.context_length_exceeded())])) as fake:
        with pytest.raises(errors.ContextTooLong, match="prompt is too long"):
            await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 1


async def test_an_overloaded_stream_before_any_text_is_retried(make, sleep):
    replies = [
        Reply(text="x", fault=stream_error("Overloaded", "overloaded_error")),
        Reply(text="ok"),
    ]
    with FakeAnthropic(Scripted(replies)) as fake:
        events = await collect(make(fake, max_retries=2).stream(ask()))
    assert text_of(events) == "ok" and sleep.delays == [0.5]
