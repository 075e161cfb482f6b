"""What an interrupted run had decided, read back from its journal, to continue from.

`from_journal` folds the events of every earlier attempt into a `Resumed`: the seed (so
labels and answer orders come out as before), the answers and votes in the order they
were decided, the failed agents and how many runs each agent had finished. `rebuild`
replays the decisions onto a fresh `Board` by the board's own rules: a vote saw exactly
the answers that existed when it was cast (a vote that saw less would not have stood),
and a newer answer retires the votes that did not see it, as it did the first time.

A run whose evaluation restarted the coordination (`OrchestrationRestarted`) continues in
its last attempt: the decisions before the restart are dropped, and the feedback of each
restart is kept (`restarts`), so the agents read it again.

Coordination and the winner are not taken from the journal: they follow from the board
(`winner.decide` is deterministic), so a run killed while presenting presents again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from massgen.coordination.board import Board, Vote
from massgen.coordination.labels import Labels
from massgen.coordination.restarts import Feedback
from massgen.core import events as ev
from massgen.core.checks import Check, Verdict
from massgen.core.outcome import Outcome
from massgen.core.status import Status

Spending = ev.AgentStarted | ev.UsageReported | ev.OrchestrationRestarted


class ResumeError(Exception):
    """The journal cannot be continued (finished, empty, or not this team's)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One decided step, in journal order: an answer (`content`) or a vote (`reason`)."""

    agent: str
    label: str  # the answer's label, or the label voted for
    content: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Resumed:
    question: str
    agents: tuple[str, ...]
    seed: int
    attempts: int  # attempts recorded so far; the resumed run is attempt `attempts + 1`
    decisions: tuple[Decision, ...]
    failed: dict[str, str] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)  # runs each agent finished
    # What the attempts before spent (for a UsageLedger): a resumed run's cost includes them.
    spending: tuple[Spending, ...] = ()
    restarts: tuple[Feedback, ...] = ()  # the evaluations that restarted the coordination
    checks: dict[str, Check] = field(default_factory=dict)  # the verifier's, by answer label

    @property
    def answer_labels(self) -> list[str]:
        return [d.label for d in self.decisions if d.content is not None]

    def summary(self) -> str:
        """What the user is told: "resumed: 3 answers, 2 votes" (standing votes)."""
        board = rebuild(self)
        answers, votes = board.total_answers, len(board.standing_votes())
        text = f"resumed: {_count(answers, 'answer')}, {_count(votes, 'vote')}"
        if self.failed:
            text += f", {len(self.failed)} failed"
        if self.restarts:
            text += f", in coordination attempt {len(self.restarts) + 1}"
        return f"{text} (attempt {self.attempts + 1})"


def from_journal(events: Sequence[ev.AnyEvent]) -> Resumed:
    """Raises ResumeError when there is nothing to continue."""
    fold = _Fold()
    for event in events:
        fold.apply(event)
    return fold.result()


def rebuild(resumed: Resumed, board: Board | None = None) -> Board:
    """The board as the journal left it (into `board` when given).

    Raises:
        ResumeError: a label in the journal is not the one the board gives (another seed
            or team).
    """
    if board is None:
        board = Board(list(resumed.agents), Labels(list(resumed.agents), resumed.seed))
    for step in resumed.decisions:
        if step.agent not in board.agent_ids:
            raise ResumeError(f"the journal names agent {step.agent!r}, not in this team")
        if step.content is not None:
            answer, _retired = board.publish(step.agent, step.content)
            if answer.label != step.label:
                raise ResumeError(f"journal label {step.label} does not match {answer.label}")
            continue
        parsed = board.labels.parse(step.label)
        if parsed is None:
            raise ResumeError(f"the journal votes for unknown label {step.label!r}")
        vote = Vote(step.agent, parsed[0], step.label, step.reason or "", board.versions())
        board.cast(vote)
    return board


class _Fold:
    def __init__(self) -> None:
        self.started: ev.RunStarted | None = None
        self.attempts = 0
        self.finished: Outcome | None = None
        self.decisions: list[Decision] = []
        self.failed: dict[str, str] = {}
        self.started_runs: dict[str, int] = {}
        self.open: set[str] = set()  # agents whose last run had not decided anything
        self.spending: list[Spending] = []
        self.restarts: list[Feedback] = []
        self.checks: dict[str, Check] = {}

    def apply(self, event: ev.AnyEvent) -> None:
        if isinstance(event, Spending):
            self.spending.append(event)
        match event:
            case ev.RunStarted():
                self.started = self.started or event
                self.attempts = max(self.attempts + 1, event.attempt)
                self.finished = None
                for agent in self.open:  # its run in flight then is redone: not finished
                    self.started_runs[agent] -= 1
                self.open.clear()
            case ev.AgentStarted():
                self.started_runs[event.agent] = event.run
                self.open.add(event.agent)
            case ev.AnswerPublished():
                self.decisions.append(Decision(event.agent, event.label, content=event.content))
                self.open.discard(event.agent)
            case ev.AnswerChecked(phase="coordination"):
                verdict = Verdict(event.verdict)
                self.checks[event.label] = Check(
                    verdict, event.note, event.excerpt, event.duration_s
                )
            case ev.VoteCast():
                step = Decision(event.agent, event.target_label, reason=event.reason)
                self.decisions.append(step)
                self.open.discard(event.agent)
            case ev.AgentFailed():
                self.failed[event.agent] = event.error
                self.open.discard(event.agent)
            case ev.AgentRestarted():
                self.open.discard(event.agent)
            case ev.RunFinished():
                self.finished = event.outcome
            case ev.OrchestrationRestarted():
                self._restarted(event)
            case _:
                pass

    def _restarted(self, event: ev.OrchestrationRestarted) -> None:
        """A new coordination began: what the attempt before decided no longer holds."""
        feedback = Feedback(
            event.attempt - 1, event.reason, event.instructions, event.previous_answer
        )
        self.restarts.append(feedback)
        self.decisions.clear()
        self.checks.clear()
        self.failed.clear()
        self.started_runs.clear()
        self.open.clear()

    def result(self) -> Resumed:
        started = self.started
        if started is None:
            raise ResumeError("the journal has no run in it")
        if started.seed is None:
            raise ResumeError("the journal was written without a seed (an older massgen)")
        if self.finished is not None and self.finished.status is not Status.INTERRUPTED:
            raise ResumeError(f"the run already finished (status {self.finished.status})")
        runs = {
            agent: count - (1 if agent in self.open else 0)
            for agent, count in self.started_runs.items()
        }
        return Resumed(
            question=started.question,
            agents=tuple(started.agents),
            seed=started.seed,
            attempts=self.attempts,
            decisions=tuple(self.decisions),
            failed=dict(self.failed),
            runs=runs,
            spending=tuple(self.spending),
            restarts=tuple(self.restarts),
            checks=dict(self.checks),
        )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
