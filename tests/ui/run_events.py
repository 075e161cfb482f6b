"""Fixed event sequences for the view tests (timestamps pinned so output never varies)."""

from __future__ import annotations

from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.core.types import Usage

QUESTION = "What is the capital of France? Answer in one short paragraph."
LABELS = {"careful": "agent1", "balanced": "agent2", "creative": "agent3"}
FINAL = "# Paris\n\nThe capital of **France** is Paris.\n\n- on the Seine\n- 2.1 million people"


def vote(voter: str, target: str, target_label: str, reason: str, at: float) -> ev.VoteCast:
    """`voter`'s vote, under its label in LABELS."""
    return ev.VoteCast(
        agent=voter,
        voter_label=LABELS[voter],
        target=target,
        target_label=target_label,
        reason=reason,
        at=at,
    )


def careful_tool_result(
    call_id: str, name: str, result: str, *, ok: bool = True, at: float, **more: object
) -> ev.ToolCallFinished:
    """A tool call of the agent `careful` has finished."""
    return ev.ToolCallFinished(
        agent="careful", call_id=call_id, name=name, result=result, ok=ok, at=at, **more
    )


def coordination() -> list[ev.AnyEvent]:
    """Three agents mid-run: one answered, one voted after a restart, one failed."""
    return [
        ev.RunStarted(question=QUESTION, agents=tuple(LABELS), labels=LABELS, at=0),
        ev.AgentStarted(agent="careful", run=1, answers_in_view=(), at=0),
        ev.AgentStarted(agent="balanced", run=1, answers_in_view=(), at=0),
        ev.AgentStarted(agent="creative", run=1, answers_in_view=(), at=0),
        ev.ReasoningDelta(agent="careful", text="France is a country; its capital is", at=1),
        ev.ReasoningDelta(agent="careful", text=" Paris.", at=1),
        ev.TextDelta(agent="careful", text="The capital of France is Paris.", at=1),
        ev.AnswerPublished(agent="careful", label="agent1.1", content="Paris.", at=2),
        ev.TextDelta(agent="balanced", text="Paris, on the Seine.", at=2),
        ev.AgentRestarted(agent="balanced", reason="new answers arrived", at=2),
        ev.AgentStarted(agent="balanced", run=2, answers_in_view=("agent1.1",), at=2),
        ev.ToolCallStarted(
            agent="creative", call_id="c1", name="search", arguments='{"q": "France"}', at=2
        ),
        ev.AgentFailed(agent="creative", error="AuthFailed: Incorrect API key provided", at=3),
        vote("balanced", "careful", "agent1.1", "correct and short", at=4),
        ev.UsageReported(agent="careful", usage=Usage(input_tokens=1200, output_tokens=300), at=4),
        ev.UsageReported(agent="balanced", usage=Usage(input_tokens=900, output_tokens=40), at=4),
    ]


def ending() -> list[ev.AnyEvent]:
    return [
        vote("careful", "careful", "agent1.1", "mine", at=5),
        ev.CoordinationFinished(
            winner="careful",
            winner_label="agent1.1",
            tally={"agent1.1": 2},
            reason="consensus: 2 of 3 agents hold a standing vote",
            at=5,
        ),
        ev.PresentationStarted(agent="careful", strategy="winner_present", at=5),
        ev.FinalTextDelta(agent="careful", text=FINAL, at=6),
        ev.RunFinished(
            outcome=Outcome(
                answer=FINAL,
                status=Status.DEGRADED,
                reason="consensus: 2 of 3 agents hold a standing vote; failed: creative",
                winner="careful",
                winner_label="agent1.1",
                failed_agents={"creative": "AuthFailed: Incorrect API key provided"},
            ),
            at=6,
        ),
    ]


def tool_calls() -> list[ev.AnyEvent]:
    """One agent calling three tools: one works, one fails, one is held (planning mode)."""
    return [
        ev.RunStarted(question=QUESTION, agents=("careful",), labels={"careful": "agent1"}, at=0),
        ev.AgentStarted(agent="careful", run=1, answers_in_view=(), at=0),
        ev.ToolCallStarted(
            agent="careful", call_id="c1", name="lookup", arguments='{"city": "Paris"}', at=1
        ),
        ev.ToolCallStarted(agent="careful", call_id="c2", name="fetch", arguments="{}", at=1),
        careful_tool_result("c1", "lookup", "Paris: 2.1 million people", duration_s=0.042, at=1),
        careful_tool_result(
            "c2", "fetch", "Error: `fetch` timed out after 60s.", ok=False, duration_s=60.0, at=2
        ),
        ev.ToolCallStarted(agent="careful", call_id="c3", name="send_email", arguments="{}", at=2),
        careful_tool_result("c3", "send_email", "Not run: planning mode is on.", held=True, at=2),
    ]
