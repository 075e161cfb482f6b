"""Structured actions: a model without function calling answers with a JSON object, which
is parsed and validated like a tool call. Against the loopback fake provider, with the
real openai SDK: `structured_actions: true` on a chatcompletion server, malformed JSON
from the model, and the correction round that follows."""

from __future__ import annotations

import itertools
import json
import threading

from shown import shown

import massgen
from massgen.api import load
from massgen.core import events as ev
from massgen.runs.members import build as build_members
from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent
from massgen.testing.policy import enums


def structured_team(base_url: str, models=("m-a", "m-b", "m-c"), free_text: bool = True) -> dict:
    """`free_text`: the turn is free text with a decision line (the default); False: the
    JSON action with the answer inside it."""
    backend = {"type": "chatcompletion", "base_url": base_url, "structured_actions": True}
    agents = [{"id": m, "backend": {**backend, "model": m}} for m in models]
    settings = {"max_new_answers_per_agent": 1, "free_text_actions": free_text}
    return {"agents": agents, "orchestrator": settings}


class FirstRepliesThen:
    """`replies` for the first calls of `model`, then a cooperative team member."""

    def __init__(self, model: str, *replies: Reply) -> None:
        self.model, self.replies = model, list(replies)
        self.calls = itertools.count()
        self.lock = threading.Lock()

    def __call__(self, request: dict) -> Reply:
        if request.get("model") == self.model:
            with self.lock:
                index = next(self.calls)
            if index < len(self.replies):
                return self.replies[index]
        return cooperative_agent(request)


async def run(config: dict) -> list[ev.Event]:
    return [event async for event in massgen.stream("What is 2+2?", config=config, logs=False)]


async def test_structured_actions_ask_for_a_json_schema_and_never_send_tools():
    with FakeProvider() as fake:
        seen = await run(structured_team(fake.base_url))
        requests = fake.requests

    assert seen[-1].outcome.status == "ok"
    coordination = [r for r in requests if r.get("response_format")]
    assert coordination and all("tools" not in r for r in requests)
    schema_of = [r["response_format"]["json_schema"]["schema"] for r in coordination]
    # Once answers are in view, the schema offers a vote whose agent_id is an enum of them.
    enums = [str(s) for s in schema_of if "anyOf" in s or s.get("properties", {}).get("agent_id")]
    assert any("'enum': ['agent" in text for text in enums)
    assert sum(isinstance(e, ev.VoteCast) for e in seen) == 3


async def test_malformed_json_is_rejected_then_corrected():
    policy = FirstRepliesThen(
        "m-a",
        Reply(text="Sure! The answer is 4."),  # no JSON at all
        Reply(text='{"action": "new_answer", "content": '),  # cut off mid-object
        Reply(text='```json\n{"action": "new_answer", "content": "   "}\n```'),  # empty answer
    )
    with FakeProvider(policy) as fake:
        config = structured_team(fake.base_url, free_text=False)
        config["orchestrator"]["max_invalid_action_retries"] = 3
        seen = await run(config)
        requests = [r for r in fake.requests if r["model"] == "m-a"]

    rejected = [e for e in seen if isinstance(e, ev.ActionRejected) and e.agent == "m-a"]
    assert [e.attempt for e in rejected] == [1, 2, 3]
    assert "one JSON object" in rejected[0].reason and "one JSON object" in rejected[1].reason
    assert "non-empty `content`" in rejected[2].reason
    # Each correction round replays the bad reply and says what was wrong, in plain text.
    retry = requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "Sure! The answer is 4."}
    assert retry[-1]["role"] == "user" and "one JSON object" in retry[-1]["content"]
    assert any(e.agent == "m-a" for e in seen if isinstance(e, ev.AnswerPublished))
    assert seen[-1].outcome.status == "ok"


async def test_a_vote_for_a_label_not_offered_is_refused_with_the_valid_ones():
    with FakeProvider(_bad_vote_once_all_answers_in(cooperative_agent)) as fake:
        seen = await run(structured_team(fake.base_url, free_text=False))

    rejected = [e for e in seen if isinstance(e, ev.ActionRejected)]
    assert len(rejected) == 1 and "Invalid agent_id 'agent9.9'" in rejected[0].reason
    assert "Valid: agent" in rejected[0].reason
    assert seen[-1].outcome.status == "ok"


def _bad_vote_once_all_answers_in(inner):
    """Vote for a label that does not exist, once, from a view of all three answers (an
    earlier view would just be refreshed rather than corrected)."""
    done = threading.Event()

    def policy(request: dict) -> Reply:
        schema = (request.get("response_format") or {}).get("json_schema", {}).get("schema", {})
        offered = next((len(v) for v in enums(schema) if v != ["vote"]), 0)
        if offered == 3 and not done.is_set():
            done.set()
            return Reply(text='{"action": "vote", "agent_id": "agent9.9", "reason": "best"}')
        return inner(request)

    return policy


def test_models_without_function_calling_always_use_structured_actions():
    local = {"agents": [{"id": "l", "backend": {"type": "local"}}]}
    server = {"agents": [{"id": "s", "backend": {"type": "chatcompletion", "model": "m",
                                                   "base_url": "http://localhost:1/v1"}}]}  # fmt: skip
    switched_on = {"agents": [{"id": "s", "backend": {**server["agents"][0]["backend"],
                                                        "structured_actions": True}}]}  # fmt: skip
    assert [m.structured_actions for m in build_members(load(local).config)] == [True]
    assert [m.structured_actions for m in build_members(load(server).config)] == [False]
    assert [m.structured_actions for m in build_members(load(switched_on).config)] == [True]


async def test_views_show_a_json_action_as_the_answer_being_written():
    answer = 'Four.\nBecause "2+2" is 4.'
    policy = FirstRepliesThen(
        "m-a", Reply(text=json.dumps({"action": "new_answer", "content": answer}))
    )
    with FakeProvider(policy) as fake:
        seen = await run(structured_team(fake.base_url, free_text=False))

    assert any(isinstance(e, ev.AgentStarted) and e.json_actions for e in seen)
    printed, panels = shown(seen)
    # Whole lines, each once (other agents' lines may come between them).
    assert printed.count("[m-a] Four.\n") == 1
    assert printed.count('[m-a] Because "2+2" is 4.\n') == 1
    assert '"action"' not in printed and "{" not in printed
    assert answer in panels["m-a"] and '"action"' not in panels["m-a"]
