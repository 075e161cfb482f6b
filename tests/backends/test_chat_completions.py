"""ChatCompletionsBackend driven through the real openai SDK against the loopback fake."""

from backend_support import ADD, ADD_TURN, ask, collect, first_request

from massgen.core import types
from massgen.testing import FakeProvider, Fault, Reply, Scripted

# --- what is sent -----------------------------------------------------------------------


async def test_request_payload_uses_typed_params_and_the_function_dialect(make_backend):
    history, tool = ADD_TURN, ADD
    params = types.GenerationParams(
        temperature=0.2, stop=("END",), extra_body={"top_k": 5}, max_tokens=64
    )
    request = types.Request(messages=history, tools=(tool,), params=params)
    body = await first_request(FakeProvider, make_backend, request, reply="5")
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
    body = await first_request(FakeProvider, make_backend, ask(json_schema=schema), reply="{}")
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Workflow_action", "schema": schema},
    }


# --- faults -----------------------------------------------------------------------------


async def test_retry_after_ms_and_cap(make_backend, sleep):
    replies = [
        Reply(fault=Fault.http(429, "slow", headers={"retry-after-ms": "1500"})),
        Reply(fault=Fault.rate_limited(3600)),
        Reply(text="ok"),
    ]
    with FakeProvider(Scripted(replies)) as fp:
        await collect(make_backend(fp, max_retries=2).stream(ask()))
    assert sleep.delays == [1.5, 60.0]
