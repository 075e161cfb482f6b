"""The fake provider's own behaviour: policies, recording, non-streaming replies, pacing."""

import json
import time

import openai
import pytest
from backend_support import ask, collect, text_of

from massgen.core.errors import BadRequest
from massgen.core.types import Message, Request, ToolCall, ToolSpec
from massgen.testing import FakeProvider, Reply, Scripted, cooperative_agent

NEW_ANSWER = ToolSpec(
    "new_answer",
    "Publish a new answer.",
    {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
)


def vote_tool(labels: list[str]) -> ToolSpec:
    properties = {"agent_id": {"type": "string", "enum": labels}, "reason": {"type": "string"}}
    params = {"type": "object", "properties": properties, "required": ["agent_id", "reason"]}
    return ToolSpec("vote", "Vote for an answer.", params)


def request_json(tools=(), model="fake-a", content="Task", schema=None) -> dict:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "tools": [
            {"type": "function", "function": {"name": t.name, "parameters": t.parameters}}
            for t in tools
        ],
    }
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "a", "schema": schema},
        }
    return body


def test_cooperative_agents_agree_whatever_order_the_labels_come_in():
    for labels in (["agent2.1", "agent1.1"], ["agent1.1", "agent2.1"]):
        reply = cooperative_agent(request_json([NEW_ANSWER, vote_tool(labels)]))
        [(name, args)] = reply.tool_calls
        assert name == "vote" and args["agent_id"] == "agent1.1" and args["reason"]


def test_cooperative_agent_answers_when_there_is_nothing_to_vote_for():
    reply = cooperative_agent(request_json([NEW_ANSWER, vote_tool([])]))
    [(name, args)] = reply.tool_calls
    assert name == "new_answer" and args["content"].startswith("[fake-a answer 1]")


def test_cooperative_agent_numbers_its_answers_from_what_it_sees():
    earlier = "<agent1.1>[fake-a answer 1] A careful answer.</agent1.1>"
    reply = cooperative_agent(request_json([NEW_ANSWER], content=earlier))
    assert reply.tool_calls[0][1]["content"].startswith("[fake-a answer 2]")


def test_cooperative_agent_presents_in_plain_text_without_tools():
    reply = cooperative_agent(request_json())
    assert reply.text.startswith("Final answer from fake-a") and not reply.tool_calls


def test_cooperative_agent_fills_a_flat_action_schema_preferring_a_vote():
    schema = {
        "type": "object",
        "properties": {
            "action": {"enum": ["new_answer", "vote"]},
            "content": {"type": "string"},
            "agent_id": {"enum": ["agent1.2"]},
            "reason": {"type": "string"},
        },
        "required": ["action"],
    }
    action = json.loads(cooperative_agent(request_json(schema=schema)).text)
    assert action == {"action": "vote"}
    schema["required"] = ["action", "agent_id", "reason"]
    action = json.loads(cooperative_agent(request_json(schema=schema)).text)
    assert action["action"] == "vote" and action["agent_id"] == "agent1.2"


def test_cooperative_agent_picks_the_answer_branch_of_a_union_when_no_votes_are_possible():
    schema = {
        "$defs": {
            "Vote": {
                "type": "object",
                "properties": {"action": {"const": "vote"}, "agent_id": {"enum": []}},
                "required": ["action", "agent_id"],
            },
            "Answer": {
                "type": "object",
                "properties": {"action": {"const": "new_answer"}, "content": {"type": "string"}},
                "required": ["action", "content"],
            },
        },
        "oneOf": [{"$ref": "#/$defs/Vote"}, {"$ref": "#/$defs/Answer"}],
    }
    action = json.loads(cooperative_agent(request_json(schema=schema)).text)
    assert action["action"] == "new_answer" and "fake-a" in action["content"]


async def test_cooperative_agent_over_the_wire(make_backend):
    request = Request(
        messages=(Message("user", "Task"),), tools=(NEW_ANSWER, vote_tool(["agent1.1"]))
    )
    with FakeProvider() as fp:
        events = await collect(make_backend(fp).stream(request))
    [call] = [e for e in events if isinstance(e, ToolCall)]
    assert call.name == "vote" and json.loads(call.arguments)["agent_id"] == "agent1.1"


async def test_scripted_per_model_queues_and_exhaustion(make_backend):
    script = Scripted({"a": [Reply(text="from a")], "b": [Reply(text="from b")]})
    with FakeProvider(script) as fp:
        b_text = text_of(await collect(make_backend(fp, model="b").stream(ask())))
        a_text = text_of(await collect(make_backend(fp, model="a").stream(ask())))
        assert script.remaining == 0
        with pytest.raises(BadRequest, match="script exhausted"):
            await collect(make_backend(fp, model="a").stream(ask()))
    assert (a_text, b_text) == ("from a", "from b")


async def test_records_requests_and_prompt_characters(make_backend):
    with FakeProvider(Scripted([Reply(text="1"), Reply(text="2")])) as fp:
        backend = make_backend(fp)
        await collect(backend.stream(ask("abc")))
        await collect(backend.stream(ask("defgh")))
        assert [r["messages"][0]["content"] for r in fp.requests] == ["abc", "defgh"]
        assert fp.prompt_chars == 8


async def test_non_streaming_completion_for_plain_sdk_calls():
    reply = Reply(text="whole", reasoning="why", tool_calls=[("f", {"x": 1})])
    with FakeProvider(Scripted([reply])) as fp:
        client = openai.AsyncOpenAI(base_url=fp.base_url, api_key="k", max_retries=0)
        try:
            result = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "q"}]
            )
        finally:
            await client.close()
    message = result.choices[0].message
    assert message.content == "whole" and message.model_extra["reasoning_content"] == "why"
    assert message.tool_calls[0].function.name == "f"
    assert result.choices[0].finish_reason == "tool_calls" and result.usage.completion_tokens > 0


async def test_latency_and_pacing_slow_the_stream_down(make_backend):
    words = "a b c d e f g h i j"
    with FakeProvider(Scripted([Reply(text=words)]), latency=0.1, tokens_per_second=100) as fp:
        started = time.monotonic()
        await collect(make_backend(fp).stream(ask()))
    # 0.1 s before the first byte, then ~10 ms per chunk over 12 chunks.
    assert time.monotonic() - started >= 0.2
