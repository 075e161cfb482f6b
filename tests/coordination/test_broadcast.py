"""Questions between agents (`coordination.broadcast`, `ask_others`): on the fake provider,
an agent asks, its peers answer in calls of their own, the answers are in its next request
and its final answer uses them; a peer that hangs is cut off at the deadline and the asker
gets the rest; the per-agent limit holds; with `human` and nobody at a terminal the tool
says so at once; the events reach events.jsonl and the views."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from io import StringIO

import pytest

from massgen.api import TeamRun
from massgen.config import config_from_dict
from massgen.coordination.agent import Member, RunSetup, Verdict, run_agent
from massgen.coordination.aids import broadcast
from massgen.coordination.board import Board
from massgen.coordination.labels import Labels
from massgen.core import events as ev
from massgen.core.effects import External
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext
from massgen.core.types import BackendEvent, Request, TextChunk, ToolCall, Usage
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Fault, Reply, cooperative_agent
from massgen.ui.model import ViewModel
from massgen.ui.plain import PlainView

QUESTION = "Build a small website about Bob Dylan."
ASKED = "Which framework should the site use: plain HTML or Vue?"
ADVICE = "Use Vue: it is simple and well documented."
IDS = ("alice", "bob", "carol")


def _system(request: dict) -> str:
    return request["messages"][0]["content"]


def _answering(request: dict) -> bool:
    return "Answering a question from your team" in _system(request)


def _vote_for(request: dict, fragment: str) -> Reply | None:
    user = request["messages"][1]["content"]
    for match in re.finditer(r"<(agent\d+\.\d+)>\n(.*?)\n<end of \1>", user, re.S):
        if fragment in match.group(2):
            return Reply(tool_calls=[("vote", {"agent_id": match.group(1), "reason": "asked"})])
    return None


def team_policy(request: dict) -> Reply:
    """alice (m-0) asks before answering and builds on the answers; bob (m-1) answers the
    question; carol (m-2) hangs when asked. Everyone votes for alice's answer once it is in
    view; the presenter repeats the selected answer."""
    model = request["model"]
    if _answering(request):
        if model == "m-2":
            return Reply(text="never sent", fault=Fault(stall_seconds=30))
        return Reply(text=ADVICE)
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    user = request["messages"][-1]["content"]
    if "<SELECTED ANSWER" in user:  # the final presentation
        selected = re.search(
            r"<SELECTED ANSWER [^>]+>\n(.*?)\n<END OF SELECTED ANSWER>", user, re.S
        )
        return Reply(text=f"Final: {selected.group(1) if selected else '?'}")
    vote = _vote_for(request, "Built on the advice") if "vote" in offered else None
    if vote is not None:
        return vote
    if model != "m-0":
        return cooperative_agent(request)
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    if not results:
        return Reply(tool_calls=[("ask_others", {"question": ASKED})])
    answers = json.loads(results[-1])
    said = "; ".join(f"{r['from']} said {r['answer']}" for r in answers["responses"])
    return Reply(tool_calls=[("new_answer", {"content": f"Built on the advice: {said}"})])


def _config(base_url: str, **coordination: object) -> dict:
    backend = {"type": "chatcompletion", "base_url": base_url, "api_key": "k"}
    return {
        "agents": [
            {"id": agent, "backend": {**backend, "model": f"m-{n}"}} for n, agent in enumerate(IDS)
        ],
        "orchestrator": {
            "seed": 3,
            "max_new_answers_per_agent": 1,
            "coordination": {"broadcast": "agents", "broadcast_timeout": 1.5, **coordination},
        },
    }


async def test_an_agent_asks_its_peers_and_its_final_answer_uses_the_answers(in_tmp):
    out = StringIO()
    with FakeProvider(team_policy) as fake:
        run = TeamRun(
            load(_config(fake.base_url)),
            QUESTION,
            sinks=[PlainView(out, show_text=False)],
            log_dir=in_tmp / "log",
        )
        result = await run.execute()
        requests = fake.requests
    assert result.ok, result.reason
    labels = run.outcome.labels
    bob, carol = labels["bob"], labels["carol"]
    assert result.answer == f"Final: Built on the advice: {bob} said {ADVICE}"

    first = next(r for r in requests if r["model"] == "m-0")
    assert "questions with the `ask_others` tool" in _system(first)
    # bob answered in a call of its own: its system message, the question, no tools.
    asked = [r for r in requests if _answering(r)]
    assert {r["model"] for r in asked} == {"m-1", "m-2"}
    assert all(not r.get("tools") and ASKED in r["messages"][-1]["content"] for r in asked)
    assert all(f"from {labels['alice']}" in r["messages"][-1]["content"] for r in asked)
    # alice's next request holds bob's answer as the tool's result; carol, who hung, is
    # named unanswered; no real agent id reaches a model.
    after = next(
        r
        for r in requests
        if r["model"] == "m-0" and any(m["role"] == "tool" for m in r["messages"])
    )
    reply = json.loads(after["messages"][-1]["content"])
    assert reply["status"] == "partial"
    assert reply["responses"] == [{"from": bob, "answer": ADVICE}]
    assert reply["unanswered"] == [{"from": carol, "why": "no answer within 1.5s"}]
    assert not {"bob", "carol"} & set(re.findall(r"\w+", after["messages"][-1]["content"]))

    logged = [json.loads(x) for x in (in_tmp / "log" / "events.jsonl").read_text().splitlines()]
    kinds = [e["type"] for e in logged]
    assert kinds.count("broadcast_asked") == 1
    asked_event = next(e for e in logged if e["type"] == "broadcast_asked")
    assert asked_event["agent"] == "alice" and sorted(asked_event["to"]) == ["bob", "carol"]
    answered = {e["responder"]: e for e in logged if e["type"] == "broadcast_answered"}
    assert answered["bob"]["ok"] and answered["bob"]["answer"] == ADVICE
    assert not answered["carol"]["ok"]
    assert any(
        e["type"] == "usage" and e["agent"] == "bob" and e["phase"] == "broadcast" for e in logged
    )
    # The call passed the permission engine (its headless policy allowed it).
    decided = [e for e in logged if e["type"] == "permission_decided" and e["tool"] == "ask_others"]
    assert decided and decided[0]["allowed"]

    lines = out.getvalue().splitlines()
    assert f"[alice] ? asks bob, carol: {ASKED}" in lines
    assert f"[alice] ↩ bob answers: {ADVICE}" in lines
    assert "[alice] ✗ carol answers: no answer within 1.5s" in lines
    table = (in_tmp / "log" / "coordination_table.txt").read_text()
    assert "asks bob, carol" in table


def test_the_live_view_shows_the_question_and_each_answer():
    model = ViewModel()
    model.apply(ev.RunStarted(question="q", agents=("alice", "bob"), labels={}))
    model.apply(ev.BroadcastAsked(agent="alice", request_id="r", question=ASKED, to=("bob",)))
    model.apply(ev.BroadcastAnswered(agent="alice", request_id="r", responder="bob", answer=ADVICE))
    alice = "".join(text for _, text in model.panes["alice"].runs)
    assert f"? asks bob: {ASKED}" in alice and f"↩ bob answers: {ADVICE}" in alice
    assert "↪ answered alice" in "".join(text for _, text in model.panes["bob"].runs)


# --- the channel on its own: bounds, waiting or not, the person -------------------------


class Replies:
    """A backend that answers every call with `text`, or hangs until cancelled."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.requests: list[Request] = []

    async def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        self.requests.append(request)
        if self.text is None:
            await asyncio.Event().wait()
        yield TextChunk(self.text or "")
        yield Usage(30, 5)

    async def aclose(self) -> None:
        pass


def _channel(
    texts: dict[str, str | None], events: list, **settings: object
) -> tuple[broadcast.Broadcasts, list[Member]]:
    members = [Member(id=agent, backend=Replies(text)) for agent, text in texts.items()]
    ids = [m.id for m in members]
    labels = Labels(ids, seed=1)
    channel = broadcast.Broadcasts(broadcast.Settings(**{"mode": "agents", **settings}))
    channel.begin(members, labels, Board(ids, labels), events.append)
    return channel, members


async def test_the_per_agent_limit_holds():
    events: list = []
    channel, _ = _channel({"a": "sure", "b": "yes"}, events, max_per_agent=2)
    for _ in range(2):
        assert json.loads(await channel.ask("a", "ok?", None, True))["status"] == "complete"
    with pytest.raises(ValueError, match="asked 2 questions this turn, the limit"):
        await channel.ask("a", "again?", None, True)
    assert sum(isinstance(e, ev.BroadcastAsked) for e in events) == 2
    assert json.loads(await channel.ask("b", "and you?", None, True))["questions_left"] == 1


async def test_without_waiting_the_answers_come_with_the_next_call():
    events: list = []
    channel, _ = _channel({"a": None, "b": ADVICE}, events, wait_by_default=False)
    pending = json.loads(await channel.ask("a", ASKED, None, None))
    assert pending["status"] == "pending"
    await asyncio.gather(*channel._tasks)
    (delivered,) = channel.inbox("a")
    assert ADVICE in delivered and pending["request_id"] in delivered
    assert channel.inbox("a") == ()  # delivered once


async def test_a_peer_that_hangs_is_cut_off_and_the_asker_gets_the_rest():
    events: list = []
    channel, _ = _channel({"a": None, "b": ADVICE, "c": None}, events, timeout_seconds=0.2)
    started = time.monotonic()
    reply = json.loads(await channel.ask("a", ASKED, None, True))
    assert time.monotonic() - started < 2
    assert reply["status"] == "partial" and [r["answer"] for r in reply["responses"]] == [ADVICE]
    assert reply["unanswered"][0]["why"] == "no answer within 0.2s"


async def test_only_the_named_peers_are_asked_and_unknown_names_are_an_error():
    events: list = []
    channel, members = _channel({"a": None, "b": "from b", "c": "from c"}, events)
    stem_c = channel._run.labels.stem("c")
    reply = json.loads(await channel.ask("a", ASKED, [stem_c], True))
    assert reply["responses"] == [{"from": stem_c, "answer": "from c"}]
    assert members[1].backend.requests == []
    with pytest.raises(ValueError, match="not your peers"):
        await channel.ask("a", ASKED, ["agent9"], True)
    with pytest.raises(ValueError, match="not your peers"):  # oneself is no peer
        await channel.ask("a", ASKED, [channel._run.labels.stem("a")], True)


async def test_human_without_a_person_returns_at_once():
    events: list = []
    channel, _ = _channel({"a": None, "b": None}, events, mode="human")
    started = time.monotonic()
    reply = json.loads(await channel.ask("a", "May I delete the old files?", None, True))
    assert time.monotonic() - started < 1
    assert reply["status"] == "no_human" and reply["responses"] == []
    assert "No person is available" in reply["unanswered"][0]["why"]
    answered = [e for e in events if isinstance(e, ev.BroadcastAnswered)]
    assert [(e.responder, e.ok) for e in answered] == [("human", False)]


class Person:
    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    async def answer_question(
        self, agent: str, question: str, timeout_seconds: float
    ) -> str | None:
        self.asked.append((agent, question))
        return self.answers.pop(0)


async def test_human_answers_come_back_with_the_earlier_ones():
    person = Person("Postgres.", None)
    members = [Member(id="a", backend=Replies(None))]
    labels = Labels(["a"], 1)
    settings = broadcast.Settings(mode="human")
    channel = broadcast.Broadcasts(settings, person)
    channel.begin(members, labels, Board(["a"], labels), lambda e: None)
    first = json.loads(await channel.ask("a", "Which database?", None, True))
    assert first["responses"] == [{"from": "human", "answer": "Postgres."}]
    second = json.loads(await channel.ask("a", "Which port?", None, True))
    assert second["status"] == "no_answers"
    assert second["earlier_answers_of_the_user"] == [
        {"question": "Which database?", "answer": "Postgres."}
    ]
    assert person.asked == [("a", "Which database?"), ("a", "Which port?")]
    assert isinstance(person, broadcast.Person)


async def test_the_tool_declares_its_effect_and_bounds_its_own_wait():
    events: list = []
    channel, _ = _channel({"a": None, "b": "yes"}, events, timeout_seconds=120)
    box = broadcast.AskToolbox(channel)
    (spec,) = box.specs()
    assert spec.name == "ask_others" and spec.timeout_seconds == 125
    assert set(spec.parameters["properties"]) == {"question", "wait", "target_agents"}
    call = ToolCall("c1", "ask_others", json.dumps({"question": "ok?"}))
    assert box.effects(call, ToolContext("a")) == (External("massgen", "ask_others"),)
    result = await box.call(call, ToolContext("a"))
    assert not result.is_error and json.loads(result.content)["status"] == "complete"
    empty = await box.call(ToolCall("c2", "ask_others", "{}"), ToolContext("a"))
    assert empty.is_error and "question" in empty.content
    # The predecessor's structured questions arrive as text.
    options = [{"id": "vue", "label": "Vue"}, {"id": "html", "label": "plain HTML"}]
    structured = {"questions": [{"text": "Which framework?", "options": options}]}
    await box.call(ToolCall("c3", "ask_others", json.dumps(structured)), ToolContext("a"))
    asked = [e.question for e in events if isinstance(e, ev.BroadcastAsked)]
    assert asked[-1] == "1. Which framework? (options: Vue, plain HTML)"


async def test_inbox_messages_are_in_the_agents_next_request():
    """What `run_agent` does with a member's inbox: its texts join the next request."""
    from scripted import ScriptedBackend, answer

    arrived = ["Answers to your question r1 (ask_others): use Vue"]
    backend = ScriptedBackend(answer("done"))
    member = Member(id="a", backend=backend, inbox=lambda: tuple(arrived and [arrived.pop()]))
    setup = RunSetup(system="s", user="u", vote_labels=[], can_answer=True,
                     max_invalid_retries=1, max_tool_iterations=2)  # fmt: skip
    await run_agent(member, setup, lambda action: Verdict.ACCEPTED, lambda event: None)
    (request,) = backend.requests
    assert request.messages[-1].content.endswith("use Vue")


# --- config ------------------------------------------------------------------------------

AGENTS = [{"id": i, "backend": {"type": "openai"}} for i in ("a", "b")]


def _coordination(**keys: object):
    return config_from_dict({"agents": AGENTS, "orchestrator": {"coordination": keys}})


def test_the_predecessor_keys_are_typed():
    coordination = _coordination(
        broadcast="human",
        broadcast_timeout=60,
        max_broadcasts_per_agent=5,
        broadcast_sensitivity="high",
        broadcast_wait_by_default=False,
        response_depth="low",
    ).orchestrator.coordination
    settings = broadcast.Settings.of(coordination)
    assert settings == broadcast.Settings("human", 60, 5, False, "high", "low")
    assert broadcast.Settings.of(_coordination(broadcast=False).orchestrator.coordination) is None
    assert broadcast.Settings.of(_coordination().orchestrator.coordination) is None


@pytest.mark.parametrize(
    ("keys", "says"),
    [
        ({"broadcast": "everyone"}, "broadcast"),
        ({"broadcast": "agents", "broadcast_timeout": 0}, "broadcast_timeout"),
        ({"broadcast": "agents", "max_broadcasts_per_agent": 0}, "max_broadcasts_per_agent"),
        ({"broadcast": "agents", "broadcast_sensitivity": "max"}, "broadcast_sensitivity"),
    ],
)
def test_bad_values_are_config_errors_naming_the_key(keys, says):
    with pytest.raises(ConfigError, match=says):
        _coordination(**keys)


def test_agents_mode_needs_a_second_agent():
    one = {"agent": {"id": "a", "backend": {"type": "openai"}}}
    with pytest.raises(ConfigError, match="this team has one agent"):
        config_from_dict({**one, "orchestrator": {"coordination": {"broadcast": "agents"}}})
    config_from_dict({**one, "orchestrator": {"coordination": {"broadcast": "human"}}})


def headless_policy(request: dict) -> Reply:
    """alice (m-0) asks the person first, then answers with what the tool said."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    if request["model"] != "m-0" or "new_answer" not in offered or "vote" in offered:
        return cooperative_agent(request)
    if not results:
        return Reply(tool_calls=[("ask_others", {"question": "Which news site?"})])
    status = json.loads(results[-1])["status"]
    return Reply(tool_calls=[("new_answer", {"content": f"The person: {status}"})])


async def test_human_mode_in_a_headless_run_says_no_one_is_there(in_tmp):
    config = _config("", broadcast="human")
    events: list = []
    with FakeProvider(headless_policy) as fake:
        for agent in config["agents"]:
            agent["backend"]["base_url"] = fake.base_url
        run = TeamRun(load(config), QUESTION, sinks=[events.append], logs=False)
        result = await run.execute()
    assert result.ok, result.reason
    published = [e.content for e in events if isinstance(e, ev.AnswerPublished)]
    assert "The person: no_human" in published
    (answered,) = [e for e in events if isinstance(e, ev.BroadcastAnswered)]
    assert answered.responder == "human" and not answered.ok and answered.duration_s < 1
