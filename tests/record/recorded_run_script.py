"""A hand-written 3-agent run, shared by the recorder tests (fixtures in conftest.py)."""

from __future__ import annotations

import itertools

from massgen.core.events import (
    ActionRejected,
    AgentFailed,
    AgentRestarted,
    AgentStarted,
    AnswerPublished,
    AnyEvent,
    CoordinationFinished,
    FinalTextDelta,
    PresentationStarted,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
    VoteCast,
    VoteInvalidated,
)
from massgen.core.status import Status
from massgen.core.types import Usage

T0 = 1_700_000_000.0
QUESTION = "What is the capital of France?"
FAILURE = "AuthFailed: the provider rejected the API key"
FINAL = "The capital of France is Paris, on the Seine."


def three_agent_run() -> list[AnyEvent]:
    """alpha and beta answer; gamma's vote is invalidated, then gamma fails; beta wins."""
    at = (T0 + i for i in itertools.count())
    return [
        RunStarted(
            at=next(at),
            question=QUESTION,
            agents=("alpha", "beta", "gamma"),
            labels={"alpha": "agent1", "beta": "agent2", "gamma": "agent3"},
        ),
        AgentStarted(at=next(at), agent="alpha", run=1, answers_in_view=()),
        AgentStarted(at=next(at), agent="beta", run=1, answers_in_view=()),
        AgentStarted(at=next(at), agent="gamma", run=1, answers_in_view=()),
        ReasoningDelta(at=next(at), agent="alpha", text="France... "),
        TextDelta(at=next(at), agent="alpha", text="Paris is "),
        TextDelta(at=next(at), agent="alpha", text="the capital."),
        UsageReported(
            at=next(at),
            agent="alpha",
            usage=Usage(input_tokens=100, output_tokens=20),
            cost_usd=0.001,
        ),
        AnswerPublished(
            at=next(at), agent="alpha", label="agent1.1", content="Paris is the capital."
        ),
        VoteCast(
            at=next(at),
            agent="gamma",
            voter_label="agent3",
            target="alpha",
            target_label="agent1.1",
            reason="Correct and short.",
        ),
        ToolCallStarted(at=next(at), agent="beta", call_id="c1", name="search", arguments="{}"),
        ToolCallFinished(
            at=next(at), agent="beta", call_id="c1", name="search", result="ok", ok=True
        ),
        AnswerPublished(at=next(at), agent="beta", label="agent2.1", content=FINAL),
        VoteInvalidated(
            at=next(at), agent="gamma", target_label="agent1.1", newer_label="agent2.1"
        ),
        AgentRestarted(at=next(at), agent="alpha", reason="a newer answer appeared"),
        AgentStarted(at=next(at), agent="alpha", run=2, answers_in_view=("agent2.1", "agent1.1")),
        AgentStarted(at=next(at), agent="gamma", run=2, answers_in_view=("agent1.1", "agent2.1")),
        ActionRejected(at=next(at), agent="gamma", reason="unknown label agent9.1", attempt=1),
        AgentFailed(at=next(at), agent="gamma", error=FAILURE),
        UsageReported(
            at=next(at),
            agent="beta",
            usage=Usage(input_tokens=300, output_tokens=50, reasoning_tokens=10),
        ),
        VoteCast(
            at=next(at),
            agent="alpha",
            voter_label="agent1",
            target="beta",
            target_label="agent2.1",
            reason="More complete than mine.",
        ),
        VoteCast(
            at=next(at),
            agent="beta",
            voter_label="agent2",
            target="beta",
            target_label="agent2.1",
            reason="Still the best.",
        ),
        CoordinationFinished(
            at=next(at),
            winner="beta",
            winner_label="agent2.1",
            tally={"agent2.1": 2},
            reason="consensus",
        ),
        PresentationStarted(at=next(at), agent="beta", strategy="winner_present"),
        FinalTextDelta(at=next(at), agent="beta", text="The capital of France "),
        FinalTextDelta(at=next(at), agent="beta", text="is Paris, on the Seine."),
        UsageReported(
            at=next(at),
            agent="beta",
            usage=Usage(input_tokens=400, output_tokens=30),
            cost_usd=0.002,
            phase="presentation",
        ),
        RunFinished(
            at=next(at),
            answer=FINAL,
            status=Status.DEGRADED,
            reason="consensus; 1 agent failed",
            winner="beta",
            winner_label="agent2.1",
            failed_agents={"gamma": FAILURE},
        ),
    ]


def index_of(events: list[AnyEvent], kind: str, n: int = 1) -> int:
    """Position of the n-th event of `kind`."""
    hits = [i for i, e in enumerate(events) if e.kind == kind]
    return hits[n - 1]


class FakeClock:
    """Advances one second per reading, so every status write has its own timestamp."""

    def __init__(self) -> None:
        self.now = T0 - 10

    def __call__(self) -> float:
        self.now += 1
        return self.now
