"""Post-evaluation and orchestration restarts, end to end on the fake provider: the winner
checks the final answer and may start the whole coordination over, with feedback."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from massgen.api import RunResult, TeamRun, load
from massgen.coordination.resume import ResumeError, from_journal
from massgen.core import events as ev
from massgen.record.journal import read_journal
from massgen.runs.resuming import prepare
from massgen.testing.fake_provider import FakeProvider, Fault, Reply, cooperative_agent
from massgen.testing.tools import InProcessTools
from massgen.ui.model import ViewModel, state_text, totals_text
from massgen.ui.plain import PlainView

pytestmark = pytest.mark.usefixtures("in_tmp")

Json = dict[str, Any]
FEEDBACK = "<PREVIOUS ATTEMPT FEEDBACK>"
QUESTION = "Describe two Beatles."


def restart(reason: str = "only John was described", instructions: str = "add Paul") -> Reply:
    args = {"reason": reason, "instructions": instructions}
    return Reply(tool_calls=[("restart_orchestration", args)])


SUBMIT = Reply(tool_calls=[("submit", {"confirmed": True})])


class Team:
    """Agents that answer, vote for the lowest label and present, saying which attempt
    they are in; the evaluator replies with `verdicts`, in order. Every request is kept
    under the attempt it belongs to (a restart verdict starts the next one)."""

    def __init__(self, *verdicts: Reply) -> None:
        self.verdicts = deque(verdicts)
        self.attempt = 1
        self.evaluations: list[Json] = []
        self.requests: dict[int, list[Json]] = {}
        self._lock = threading.Lock()

    def __call__(self, request: Json) -> Reply:
        tools = {
            t["function"]["name"]: t["function"]["parameters"] for t in request.get("tools") or []
        }
        with self._lock:
            if "submit" in tools:
                self.evaluations.append(request)
                reply = self.verdicts.popleft()
                if any(name == "restart_orchestration" for name, _ in reply.tool_calls):
                    self.attempt += 1
                return reply
            self.requests.setdefault(self.attempt, []).append(request)
            attempt = self.attempt
        model = request["model"]
        labels = (tools.get("vote") or {}).get("properties", {}).get("agent_id", {}).get("enum")
        if labels:
            return Reply(tool_calls=[("vote", {"agent_id": min(labels), "reason": "good"})])
        if "new_answer" in tools:
            content = f"answer of attempt {attempt} by {model}"
            return Reply(tool_calls=[("new_answer", {"content": content})])
        return Reply(text=f"final answer of attempt {attempt}")


def config(base_url: str, restarts: int, **orchestrator: Any) -> Json:
    backend = {"type": "chatcompletion", "base_url": base_url}
    agents = [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(2)]
    coordination = {"max_orchestration_restarts": restarts}
    return {
        "agents": agents,
        "orchestrator": {"seed": 3, "coordination": coordination, **orchestrator},
    }


def coordinating(requests: list[Json]) -> list[Json]:
    """The requests of agents at work (offered `new_answer` or `vote`)."""
    names = lambda r: {t["function"]["name"] for t in r.get("tools") or []}  # noqa: E731
    return [r for r in requests if names(r) & {"new_answer", "vote"}]


def user_text(request: Json) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


def run(team: Team, restarts: int, **orchestrator: Any) -> tuple[RunResult, list[ev.AnyEvent]]:
    seen: list[ev.AnyEvent] = []
    with FakeProvider(team) as fake:
        loaded = load(config(fake.base_url, restarts, **orchestrator))
        result = asyncio.run(TeamRun(loaded, QUESTION, sinks=[seen.append]).execute())
    return result, seen


def kinds(events: list[ev.AnyEvent], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def test_a_restart_runs_the_coordination_again_with_the_feedback():
    team = Team(restart(), SUBMIT)
    result, events = run(team, restarts=2)

    assert len(kinds(events, ev.CoordinationFinished)) == 2
    (restarted,) = kinds(events, ev.OrchestrationRestarted)
    assert (restarted.attempt, restarted.max_attempts) == (2, 3)
    assert restarted.reason == "only John was described" and restarted.instructions == "add Paul"
    assert restarted.previous_answer == "final answer of attempt 1"
    # Every coordination request of attempt 2 opens with the feedback; none of attempt 1 does.
    second = coordinating(team.requests[2])
    assert second and all(user_text(r).startswith(FEEDBACK) for r in second)
    assert all(
        "add Paul" in user_text(r) and "final answer of attempt 1" in user_text(r) for r in second
    )
    assert not any(FEEDBACK in user_text(r) for r in team.requests[1])
    # The answer is attempt 2's, and the result says how it came about.
    assert result.ok and result.answer == "final answer of attempt 2"
    assert result.attempts == 2 and [f.reason for f in result.restarts] == [
        "only John was described"
    ]
    assert {r.attempt for r in result.rounds} == {1, 2}
    # Two evaluations, each of its own attempt's final answer.
    assert [json.dumps(e["tools"]).count("restart_orchestration") for e in team.evaluations] == [
        1,
        1,
    ]
    assert "FINAL ANSWER TO EVALUATE:\nfinal answer of attempt 1" in user_text(team.evaluations[0])
    assert "FINAL ANSWER TO EVALUATE:\nfinal answer of attempt 2" in user_text(team.evaluations[1])
    verdicts = kinds(events, ev.EvaluationFinished)
    assert [(v.attempt, v.submitted) for v in verdicts] == [(1, False), (2, True)]


def test_the_log_records_every_attempt():
    team = Team(restart(), SUBMIT)
    result, _ = run(team, restarts=1)
    log = result.log_dir
    assert log is not None
    journal = read_journal(log / "events.jsonl")
    assert [e.attempt for e in journal if isinstance(e, ev.OrchestrationRestarted)] == [2]
    status = json.loads((log / "status.json").read_text())
    assert status["orchestration"]["attempt"] == 2
    assert status["orchestration"]["restarts"][0]["reason"] == "only John was described"
    table = (log / "coordination_table.txt").read_text()
    assert "coordination 2/2 restarted: only John was described" in table
    assert "asks for a restart" in table
    winner = result.winner
    assert (
        log / f"agent_{winner}" / "answer_1.txt"
    ).read_text() == f"answer of attempt 1 by m{winner[-1]}"
    assert (log / f"agent_{winner}" / "attempt_2" / "answer_1.txt").exists()


def test_when_the_restarts_are_used_up_the_last_answer_stands_unevaluated():
    team = Team(restart(), restart("still wrong"))
    result, events = run(team, restarts=1)
    assert len(team.evaluations) == 1 and len(team.verdicts) == 1  # the second is never asked
    assert result.ok and result.answer == "final answer of attempt 2" and result.attempts == 2
    assert len(kinds(events, ev.OrchestrationRestarted)) == 1


def test_an_evaluator_that_calls_no_tool_submits():
    team = Team(Reply(text="Looks complete to me."))
    result, events = run(team, restarts=2)
    assert result.ok and result.answer == "final answer of attempt 1" and result.attempts == 1
    (verdict,) = kinds(events, ev.EvaluationFinished)
    assert verdict.submitted and verdict.note.startswith("no tool call")
    assert not kinds(events, ev.OrchestrationRestarted) and 2 not in team.requests


def test_no_evaluation_without_restarts():
    team = Team()
    result, events = run(team, restarts=0)
    assert result.ok and not team.evaluations and not kinds(events, ev.EvaluationStarted)


def test_the_debug_answer_is_evaluated_on_the_first_attempt_only():
    team = Team(restart(), SUBMIT)
    result, events = run(team, restarts=2, debug_final_answer="I created a hello.txt file.")
    first, second = (user_text(e) for e in team.evaluations)
    assert "FINAL ANSWER TO EVALUATE:\nI created a hello.txt file." in first
    assert "final answer of attempt 1" not in first
    assert "FINAL ANSWER TO EVALUATE:\nfinal answer of attempt 2" in second
    assert [e.debug_override for e in kinds(events, ev.EvaluationStarted)] == [True, False]
    assert result.answer == "final answer of attempt 2"


def test_the_plain_view_shows_the_restart():
    team = Team(restart(), SUBMIT)
    _, events = run(team, restarts=1)
    out = _Out()
    view = PlainView(out, show_text=False)
    for event in events:
        view(event)
    assert "=== orchestration restart: attempt 2/2 ===" in out.text
    assert "reason: only John was described" in out.text and "instructions: add Paul" in out.text
    assert "evaluating the final answer" in out.text


class _Out:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_a_run_killed_in_its_second_attempt_resumes_there(tmp_path: Path):
    team = Team(restart(), SUBMIT)
    with FakeProvider(team) as fake:
        loaded = load(config(fake.base_url, 1))
        first = asyncio.run(TeamRun(loaded, QUESTION).execute())
        log = first.log_dir
        assert log is not None
        # Cut the journal after attempt 2's first answer: as if killed right then.
        lines = (log / "events.jsonl").read_text().splitlines(keepends=True)
        restart_at = next(i for i, line in enumerate(lines) if "orchestration_restarted" in line)
        cut = next(
            i for i, line in enumerate(lines) if i > restart_at and "answer_published" in line
        )
        (log / "events.jsonl").write_text("".join(lines[: cut + 1]))
        before = len(team.requests[2])

        resumable = prepare(str(log), None)
        assert len(resumable.resumed.restarts) == 1
        assert len(resumable.resumed.decisions) == 1  # only attempt 2's answer
        resumed = TeamRun(
            resumable.loaded, resumable.resumed.question, log_dir=log, resumed=resumable.resumed
        )
        result = asyncio.run(resumed.execute())
    later = coordinating(team.requests[2][before:])
    assert later and all(user_text(r).startswith(FEEDBACK) for r in later)
    assert result.ok and result.answer == "final answer of attempt 2" and result.attempts == 2
    assert len(team.evaluations) == 1  # attempt 2 is the last: not evaluated


def test_the_evaluator_may_check_with_its_tools_before_it_decides():
    async def count_members(band: str) -> str:
        return f"{band} had 4 members"

    tools = InProcessTools().add("count_members", count_members, read_only=True)
    team = Team(Reply(tool_calls=[("count_members", {"band": "Beatles"})]), SUBMIT)
    with FakeProvider(team) as fake:
        # An in-process tool declares no effects: the permission engine would refuse it.
        loaded = load({**config(fake.base_url, 1), "permissions": False})
        boxes = {"a0": tools, "a1": tools}
        result = asyncio.run(TeamRun(loaded, QUESTION, toolboxes=boxes).execute())
    (ran,) = tools.calls_of("count_members")
    assert (ran.agent, ran.phase) == (result.winner, "coordination")
    assert len(team.evaluations) == 2
    tool_messages = [m for m in team.evaluations[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["Beatles had 4 members"]
    assert result.ok and result.attempts == 1 and result.answer == "final answer of attempt 1"


def test_an_evaluation_past_the_deadline_submits_the_answer():
    team = Team(Reply(fault=Fault(stall_seconds=60)))
    seen: list[ev.AnyEvent] = []
    with FakeProvider(team) as fake:
        loaded = load(config(fake.base_url, 2))
        run_ = TeamRun(loaded, QUESTION, sinks=[seen.append], deadline_seconds=6)
        result = asyncio.run(run_.execute())
    (verdict,) = kinds(seen, ev.EvaluationFinished)
    assert verdict.submitted and verdict.note == "timed out"
    assert result.ok and result.answer == "final answer of attempt 1" and result.attempts == 1


def test_a_presentation_that_may_be_restarted_says_so():
    # `massgen serve` then sends the final answer once it stands, not the text streamed.
    _, events = run(Team(restart(), SUBMIT), restarts=1)
    assert [p.may_restart for p in kinds(events, ev.PresentationStarted)] == [True, False]


def test_a_json_action_model_gives_its_verdict_as_json():
    restart_json = {
        "action": "restart_orchestration",
        "reason": "too short",
        "instructions": "more",
    }
    verdicts = deque([Reply(text=json.dumps(restart_json)), Reply(text='{"action": "submit"}')])
    evaluations: list[Json] = []

    def policy(request: Json) -> Reply:
        if "restart_orchestration" in json.dumps(request.get("response_format") or {}):
            evaluations.append(request)
            return verdicts.popleft()
        return cooperative_agent(request)

    with FakeProvider(policy) as fake:
        raw = config(fake.base_url, 2)
        for agent in raw["agents"]:
            agent["backend"]["structured_actions"] = True
        result = asyncio.run(TeamRun(load(raw), QUESTION, logs=False).execute())
    assert len(evaluations) == 2 and not verdicts
    assert all(not request.get("tools") for request in evaluations)
    assert result.ok and result.attempts == 2 and result.restarts[0].reason == "too short"


def test_the_live_view_marks_the_evaluation_and_the_new_attempt():
    _, events = run(Team(restart(), SUBMIT), restarts=1)
    model = ViewModel()
    cut = next(i for i, e in enumerate(events) if isinstance(e, ev.EvaluationStarted))
    for event in events[: cut + 1]:
        model.apply(event)
    winner = events[cut].agent
    assert state_text(model, winner) == ("winner", "★ evaluating the final answer")
    for event in events[cut + 1 :]:
        model.apply(event)
    for agent in model.agents:
        shown = "".join(text for _, text in model.pane(agent).runs)
        assert "══ attempt 2/2: only John was described ══" in shown
    assert "── evaluating the final answer ──" in "".join(t for _, t in model.pane(winner).runs)
    # The totals count the answers of the attempt shown, not of both.
    assert totals_text(model).startswith("answers 2 ")


def test_agents_with_workspaces_start_the_new_attempt_without_the_old_answers_files():
    team = Team(restart(), SUBMIT)
    with FakeProvider(team) as fake:
        raw = config(fake.base_url, 1)
        for index, agent in enumerate(raw["agents"]):
            agent["backend"]["cwd"] = f"ws{index}"
        run_ = TeamRun(load(raw), QUESTION)
        result = asyncio.run(run_.execute())
    assert result.ok and result.attempts == 2
    assert run_.workspaces is not None
    assert set(run_.workspaces.snapshots()) == {a.label for a in run_.outcome.answers}
    second = coordinating(team.requests[2])
    assert all("still holds your files from the previous attempt" in user_text(r) for r in second)


def test_the_journal_of_a_restarted_run_folds_into_its_last_attempt():
    _, events = run(Team(restart(), SUBMIT), restarts=1)
    restarted = next(i for i, e in enumerate(events) if isinstance(e, ev.OrchestrationRestarted))
    first_answer = next(
        i for i, e in enumerate(events) if i > restarted and isinstance(e, ev.AnswerPublished)
    )
    resumed = from_journal(events[: first_answer + 1])
    assert [d.content for d in resumed.decisions] == [events[first_answer].content]
    assert [(f.attempt, f.reason) for f in resumed.restarts] == [(1, "only John was described")]
    assert "in coordination attempt 2" in resumed.summary()
    with pytest.raises(ResumeError):  # it finished: nothing to resume
        from_journal(events)


def test_the_evaluators_tool_rounds_are_bounded_and_the_last_call_must_decide():
    async def count_members(band: str) -> str:
        return f"{band} had 4 members"

    tools = InProcessTools().add("count_members", count_members, read_only=True)
    check = Reply(tool_calls=[("count_members", {"band": "Beatles"})])
    team = Team(check, check)
    seen: list[ev.AnyEvent] = []
    with FakeProvider(team) as fake:
        loaded = load({**config(fake.base_url, 1, max_tool_iterations=1), "permissions": False})
        boxes = {"a0": tools, "a1": tools}
        run_ = TeamRun(loaded, QUESTION, toolboxes=boxes, sinks=[seen.append], logs=False)
        result = asyncio.run(run_.execute())
    offered = [{t["function"]["name"] for t in e["tools"]} for e in team.evaluations]
    verdicts = {"submit", "restart_orchestration"}
    assert offered == [{*verdicts, "count_members"}, verdicts]
    assert len(tools.calls_of("count_members")) == 1  # the call it was not offered never ran
    (verdict,) = kinds(seen, ev.EvaluationFinished)
    assert verdict.submitted and verdict.note == "no verdict: submitted"
    assert result.ok and result.attempts == 1
