"""A hand-written 3-agent run, shared by the recorder tests (fixtures in conftest.py)."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable
from typing import Any

from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.core.types import Usage

T0 = 1_700_000_000.0
QUESTION = "What is the capital of France?"
FAILURE = "AuthFailed: the provider rejected the API key"
FINAL = "The capital of France is Paris, on the Seine."
LABELS = {"alpha": "agent1", "beta": "agent2", "gamma": "agent3"}


def vote(at: float, voter: str, target: str, target_label: str, reason: str) -> ev.VoteCast:
    """`voter`'s vote, under its label in LABELS."""
    return ev.VoteCast(
        at=at,
        agent=voter,
        voter_label=LABELS[voter],
        target=target,
        target_label=target_label,
        reason=reason,
    )


def three_agent_run() -> list[ev.AnyEvent]:
    """alpha and beta answer; gamma's vote is invalidated, then gamma fails; beta wins."""
    at = (T0 + i for i in itertools.count())
    return [
        ev.RunStarted(
            at=next(at),
            question=QUESTION,
            agents=tuple(LABELS),
            labels=LABELS,
        ),
        ev.AgentStarted(at=next(at), agent="alpha", run=1, answers_in_view=()),
        ev.AgentStarted(at=next(at), agent="beta", run=1, answers_in_view=()),
        ev.AgentStarted(at=next(at), agent="gamma", run=1, answers_in_view=()),
        ev.ReasoningDelta(at=next(at), agent="alpha", text="France... "),
        ev.TextDelta(at=next(at), agent="alpha", text="Paris is "),
        ev.TextDelta(at=next(at), agent="alpha", text="the capital."),
        ev.UsageReported(
            at=next(at),
            agent="alpha",
            usage=Usage(input_tokens=100, output_tokens=20),
            cost_usd=0.001,
        ),
        ev.AnswerPublished(
            at=next(at), agent="alpha", label="agent1.1", content="Paris is the capital."
        ),
        vote(next(at), "gamma", "alpha", "agent1.1", "Correct and short."),
        ev.ToolCallStarted(at=next(at), agent="beta", call_id="c1", name="search", arguments="{}"),
        ev.ToolCallFinished(
            at=next(at), agent="beta", call_id="c1", name="search", result="ok", ok=True
        ),
        ev.AnswerPublished(at=next(at), agent="beta", label="agent2.1", content=FINAL),
        ev.VoteInvalidated(
            at=next(at), agent="gamma", target_label="agent1.1", newer_label="agent2.1"
        ),
        ev.AgentRestarted(at=next(at), agent="alpha", reason="a newer answer appeared"),
        ev.AgentStarted(
            at=next(at), agent="alpha", run=2, answers_in_view=("agent2.1", "agent1.1")
        ),
        ev.AgentStarted(
            at=next(at), agent="gamma", run=2, answers_in_view=("agent1.1", "agent2.1")
        ),
        ev.ActionRejected(at=next(at), agent="gamma", reason="unknown label agent9.1", attempt=1),
        ev.AgentFailed(at=next(at), agent="gamma", error=FAILURE),
        ev.UsageReported(
            at=next(at),
            agent="beta",
            usage=Usage(input_tokens=300, output_tokens=50, reasoning_tokens=10),
        ),
        vote(next(at), "alpha", "beta", "agent2.1", "More complete than mine."),
        vote(next(at), "beta", "beta", "agent2.1", "Still the best."),
        ev.CoordinationFinished(
            at=next(at),
            winner="beta",
            winner_label="agent2.1",
            tally={"agent2.1": 2},
            reason="consensus",
        ),
        ev.PresentationStarted(at=next(at), agent="beta", strategy="winner_present"),
        ev.FinalTextDelta(at=next(at), agent="beta", text="The capital of France "),
        ev.FinalTextDelta(at=next(at), agent="beta", text="is Paris, on the Seine."),
        ev.UsageReported(
            at=next(at),
            agent="beta",
            usage=Usage(input_tokens=400, output_tokens=30),
            cost_usd=0.002,
            phase="presentation",
        ),
        ev.RunFinished(
            at=next(at),
            outcome=Outcome(
                answer=FINAL,
                status=Status.DEGRADED,
                reason="consensus; 1 agent failed",
                winner="beta",
                winner_label="agent2.1",
                failed_agents={"gamma": FAILURE},
            ),
        ),
    ]


def index_of(events: list[ev.AnyEvent], kind: str, n: int = 1) -> int:
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


def eventually(read: Callable[[], Any], done: Callable[[Any], bool], seconds: float = 10) -> Any:
    """What `read` returns once `done` says so (a file that is missing counts as not yet):
    the recorder's writer thread writes its files a moment after the events."""
    deadline = time.monotonic() + seconds
    value: Any = "missing"
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            value = read()
            if done(value):
                return value
        time.sleep(0.01)
    raise AssertionError(f"not done after {seconds} s: {value}")
