"""Stopping one agent (the app's x): its call in flight is cancelled, what it published
stays, and the team goes on without it for the rest of the run; the run cannot be left
without an agent working."""

from __future__ import annotations

import asyncio
import json

import pytest
from scripted import Cues, Gate, ScriptedBackend, answer, text, vote_for

from massgen.config.schema import OrchestratorConfig
from massgen.coordination.agent import Member
from massgen.coordination.orchestrator import Orchestrator
from massgen.coordination.stopping import STOPPED
from massgen.core import events as ev
from massgen.core.types import Finish, ToolCall, Usage


def orchestrator(cues: Cues, **backends: ScriptedBackend) -> Orchestrator:
    members = [Member(id=name, backend=backend) for name, backend in backends.items()]
    config = OrchestratorConfig(seed=7, coordination={"max_orchestration_restarts": 1})
    return Orchestrator(members, config, deadline_seconds=10, emit=cues)


def evaluation(name: str, **arguments: object) -> list:
    """The presenter's check of the final answer: submit it, or start over."""
    call = ToolCall(f"call_{name}", name, json.dumps(arguments))
    return [call, Usage(50, 10), Finish("tool_calls")]


RESTART = evaluation("restart_orchestration", reason="too short", instructions="say more")
SUBMIT = evaluation("submit", confirmed=True)


async def test_a_stopped_agent_is_cancelled_and_the_team_decides_without_it():
    cues, never = Cues(), asyncio.Event()
    two_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(answer("It is Lyon."), vote_for("Paris"))
    b = ScriptedBackend(answer("Paris."), vote_for("Paris"), text("Paris, finally."), SUBMIT)
    slow = ScriptedBackend(Gate(never, answer("Marseille.")))  # never writes its answer
    orch = orchestrator(cues, a=a, b=b, slow=slow)
    run = asyncio.create_task(orch.run("Capital of France?"))
    await asyncio.wait_for(two_in.wait(), 5)
    # Its peers wait for its first answer; without the stop they would wait forever.
    assert orch.stop("slow") is None
    outcome = await asyncio.wait_for(run, 5)

    assert (outcome.winner, outcome.answer) == ("b", "Paris, finally.")
    assert outcome.failed_agents == {"slow": STOPPED}
    assert outcome.reason.endswith("2 of 3 agents hold a standing vote; stopped by you: slow")
    assert [(e.agent, e.stopped) for e in cues.of(ev.AgentFailed)] == [("slow", True)]
    assert len(slow.requests) == 1  # its one call was cancelled, none followed
    assert [e.agent for e in cues.of(ev.AnswerPublished)] == ["a", "b"]


async def test_what_a_stopped_agent_published_stays_and_it_stays_out_after_a_restart():
    cues, never = Cues(), asyncio.Event()
    three_in = cues.after(ev.AnswerPublished, 3)
    a = ScriptedBackend(
        answer("It is Lyon."), vote_for("Paris"), answer("Lyon, still."), vote_for("Paris, as")
    )
    b = ScriptedBackend(
        answer("Paris."), vote_for("Paris"), text("Paris."), RESTART,
        answer("Paris, as before."), vote_for("Paris, as"), text("Paris, at length."), SUBMIT,
    )  # fmt: skip
    slow = ScriptedBackend(answer("Marseille."), Gate(never, text("")))
    orch = orchestrator(cues, a=a, b=b, slow=slow)
    run = asyncio.create_task(orch.run("Capital of France?"))
    await asyncio.wait_for(three_in.wait(), 5)
    assert orch.stop("slow") is None  # while it weighs the answers
    outcome = await asyncio.wait_for(run, 10)

    assert outcome.answer == "Paris, at length." and outcome.attempts == 2
    # Its answer of the first attempt was on that board; the second went on without it.
    published = [(e.agent, e.content) for e in cues.of(ev.AnswerPublished)]
    assert ("slow", "Marseille.") in published and len(slow.requests) == 2
    assert [e.agent for e in cues.of(ev.AgentFailed)] == ["slow", "slow"]  # once per attempt
    assert outcome.failed_agents == {"slow": STOPPED}


async def test_a_stop_that_cannot_be_done_says_why_and_changes_nothing():
    cues, never = Cues(), asyncio.Event()
    a = ScriptedBackend(Gate(never, text("")))
    b = ScriptedBackend(Gate(never, text("")))
    orch = orchestrator(cues, a=a, b=b)
    assert orch.stop("a") is not None  # not started: nothing to stop
    run = asyncio.create_task(orch.run("q"))
    while len(a.requests) + len(b.requests) < 2:
        await asyncio.sleep(0)

    assert orch.stop("zed") == "there is no agent 'zed'"
    assert orch.stop("a") is None
    assert orch.stop("a") == "a has already stopped"
    assert orch.stop("b") == "b is the last agent working: Ctrl-C stops the run"
    assert [e.agent for e in cues.of(ev.AgentFailed)] == ["a"]
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert orch.stop("b") == "the team is not coordinating now"
