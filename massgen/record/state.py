"""What a run has decided so far, folded from its events.

Every recorded file (status.json, vote.json, the per-agent files) is rendered from this
one state, so they cannot disagree with each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, assert_never

from massgen.core import event_groups as groups
from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.usage import Spend, UsageLedger
from massgen.record.text import iso, version_of

# Streamed chunks: many per second, so they are buffered and never trigger a rewrite.
# A tool's progress lines too (bounded per call; the views show them, the files do not).
STREAM_EVENTS = (ev.TextDelta, ev.ReasoningDelta, ev.FinalTextDelta, ev.ToolCallProgress)

# What changes coordination: who answered, voted, failed, won.
_DECISIONS = (
    ev.RunStarted,
    ev.AgentStarted,
    ev.AnswerPublished,
    ev.AnswerChecked,
    ev.VoteCast,
    ev.VoteInvalidated,
    ev.ActionRejected,
    ev.AgentRestarted,
    ev.AgentFailed,
    ev.CoordinationFinished,
    ev.PresentationStarted,
    ev.RunFinished,
    ev.EvaluationStarted,
    ev.EvaluationFinished,
    ev.OrchestrationRestarted,
)

# What a reader of the coordination log cares about: the decisions, and each tool call
# (one entry when it finishes: name, ok, how long).
COORDINATION_EVENTS = (
    *_DECISIONS,
    ev.ToolCallFinished,
    ev.HostedToolUsed,
    ev.SubagentFinished,
    ev.ToolSourceFailed,
    ev.AgentWarning,
    ev.PermissionDecided,
    ev.PersonaAssigned,
    ev.CriteriaGenerated,
    ev.QuestionParaphrased,
    ev.GeneratorFailed,
    ev.BroadcastAsked,
    ev.BroadcastAnswered,
)

# Events that change what status.json shows: coordination, plus live token/cost totals.
STATUS_EVENTS = (*_DECISIONS, ev.UsageReported)


@dataclass(slots=True)
class LoggedVote:
    """A vote as the log tells it: when it was cast and what ended it. (The board's `Vote`
    carries what its voter saw, for the rule; this one is history, for readers.)"""

    voter: str
    voter_label: str
    target: str
    target_label: str
    reason: str
    at: float
    standing: bool = True
    ended_by: str | None = None  # the newer answer label, or "superseded"

    def to_dict(self) -> dict[str, Any]:
        return {
            "voter": self.voter,
            "voter_label": self.voter_label,
            "target": self.target,
            "target_label": self.target_label,
            "reason": self.reason,
            "timestamp": iso(self.at),
            "standing": self.standing,
            "ended_by": self.ended_by,
        }


@dataclass(slots=True)
class LoggedAnswer:
    """An answer as the log shows it. (The board's `Answer` also orders it in the team.)"""

    label: str
    version: int
    content: str
    files: tuple[str, ...] = ()  # what it changed in its workspace ("+ a", "~ b", "- c")
    diff: str = ""


@dataclass(slots=True)
class AgentState:
    label: str  # anonymous stem, "agent2"
    status: str = "waiting"
    runs: int = 0
    answers: list[LoggedAnswer] = field(default_factory=list)
    vote: LoggedVote | None = None  # the standing vote, if any
    restarts: int = 0
    rejected_actions: int = 0
    error: str | None = None
    stopped: bool = False  # the person stopped it: "failed" only in that it is out


class RunState(groups.GroupFold[None]):
    """The fold of a run's events; `apply` is called once per event, in order."""

    def __init__(self, question: str) -> None:
        self.question = question
        self.agents: dict[str, AgentState] = {}
        self.votes: list[LoggedVote] = []
        self.phase = "coordinating"
        self.outcome: ev.CoordinationFinished | None = None
        self.finished: Outcome | None = None  # from RunFinished
        self.presenter: str | None = None
        self.strategy: str | None = None
        self.final_parts: list[str] = []  # presentation text streamed so far
        self.ended: str | None = None  # "interrupted"/"incomplete" if closed without RunFinished
        self.usage = UsageLedger()
        self.max_tokens: int | None = None  # the run's budget, if it has one
        self.max_cost: float | None = None
        # Orchestration restarts: the coordination under way, and why the earlier ended.
        self.attempt = 1
        self.max_attempts = 1
        self.restarts: list[ev.OrchestrationRestarted] = []
        self.verdict: ev.EvaluationFinished | None = None  # this attempt's evaluation
        # The verifier's verdicts: each answer's by label, and the presented text's.
        self.checks: dict[str, ev.AnswerChecked] = {}
        self.final_check: ev.AnswerChecked | None = None

    def agent(self, agent_id: str) -> AgentState:
        """The agent's state, created on first sight (an event may precede RunStarted)."""
        if agent_id not in self.agents:
            self.agents[agent_id] = AgentState(label=agent_id)
        return self.agents[agent_id]

    def end(self, interrupted: bool) -> None:
        """The recording stops; without a RunFinished, say how the run ended."""
        if self.finished is None:
            self.ended = "interrupted" if interrupted else "incomplete"
            self.phase = "finished"

    @property
    def run_status(self) -> str:
        if self.finished is not None:
            return self.finished.status
        return self.ended or "running"

    @property
    def finish_reason(self) -> str | None:
        return self.finished.reason if self.finished is not None else self.ended

    @property
    def winner(self) -> str | None:
        source = self.finished or self.outcome
        return source.winner if source else None

    @property
    def winner_label(self) -> str | None:
        source = self.finished or self.outcome
        return source.winner_label if source else None

    def spend(self, agent_id: str) -> Spend:
        return self.usage.of(agent_id)

    def totals(self) -> Spend:
        return self.usage.total()

    def standing_tally(self) -> dict[str, int]:
        """Votes per answer label among votes still standing: the tally before it is final."""
        tally: dict[str, int] = {}
        for vote in self.votes:
            if vote.standing:
                tally[vote.target_label] = tally.get(vote.target_label, 0) + 1
        return tally

    def apply(self, event: ev.AnyEvent) -> None:
        self.usage(event)
        self.fold(event)

    def on_stream(self, event: groups.AgentStream) -> None:
        match event:
            case ev.AgentStarted():
                self._agent_started(event)
            case ev.FinalTextDelta():
                self.final_parts.append(event.text)
            case ev.TextDelta() | ev.ReasoningDelta():
                pass
            case _:
                assert_never(event)

    def on_tool(self, event: groups.ToolActivity) -> None:
        match event:
            case ev.ToolSourceFailed() | ev.AgentWarning() | ev.PermissionDecided():
                self.agent(event.agent)  # these may come before the agent's first run
            case (
                ev.ToolCallStarted()
                | ev.ToolCallProgress()
                | ev.ToolCallFinished()
                | ev.HostedToolUsed()
                | ev.SubagentStarted()
                | ev.SubagentFinished()
            ):
                pass
            case _:
                assert_never(event)

    def on_decision(self, event: groups.Decision) -> None:
        match event:
            case ev.AnswerPublished():
                self._answer_published(event)
            case ev.AnswerChecked(phase="presentation"):
                self.final_check = event
            case ev.AnswerChecked():
                self.checks[event.label] = event
            case ev.VoteCast():
                self._vote_cast(event)
            case ev.VoteInvalidated():
                self._vote_invalidated(event)
            case ev.ActionRejected():
                self.agent(event.agent).rejected_actions += 1
            case ev.AgentRestarted():
                self._agent_restarted(event)
            case ev.AgentFailed():
                self._agent_failed(event)
            case _:
                assert_never(event)

    def on_aid(self, event: groups.AidActivity) -> None:
        self.agent(event.agent)  # the aids decide nothing; their agent is in the run

    def on_progress(self, event: groups.RunProgress) -> None:
        match event:
            case ev.RunStarted():
                self._run_started(event)
            case ev.UsageReported():
                self.agent(event.agent)
            case ev.CoordinationFinished():
                self.outcome = event
                self.phase = "presenting"
            case ev.PresentationStarted():
                self._presentation_started(event)
            case ev.EvaluationStarted():
                self.phase = "evaluating"
                self.agent(event.agent).status = "evaluating"
            case ev.EvaluationFinished():
                self.verdict = event
                self.phase = "presenting"
                self.agent(event.agent).status = "presenting"
            case ev.OrchestrationRestarted():
                self._orchestration_restarted(event)
            case ev.RunFinished():
                self._run_finished(event)
            case _:
                assert_never(event)

    def _run_started(self, event: ev.RunStarted) -> None:
        self.question = event.question or self.question
        self.max_tokens, self.max_cost = event.max_tokens, event.max_cost
        if event.attempt > 1:  # resumed: how the attempt before ended no longer holds
            self.phase, self.outcome, self.finished, self.ended = "coordinating", None, None, None
            self.final_parts = []
        for agent_id in event.agents:
            self.agent(agent_id).label = event.labels.get(agent_id, agent_id)

    def _agent_started(self, event: ev.AgentStarted) -> None:
        state = self.agent(event.agent)
        state.runs = event.run
        state.status = "streaming"

    def _answer_published(self, event: ev.AnswerPublished) -> None:
        state = self.agent(event.agent)
        version = version_of(event.label, len(state.answers) + 1)
        answer = LoggedAnswer(event.label, version, event.content, event.files, event.diff)
        state.answers.append(answer)
        state.status = "answered"

    def _vote_cast(self, event: ev.VoteCast) -> None:
        state = self.agent(event.agent)
        if state.vote is not None:
            _end(state.vote, "superseded")
        vote = LoggedVote(
            voter=event.agent,
            voter_label=event.voter_label,
            target=event.target,
            target_label=event.target_label,
            reason=event.reason,
            at=event.at,
        )
        self.votes.append(vote)
        state.vote = vote
        state.status = "voted"

    def _vote_invalidated(self, event: ev.VoteInvalidated) -> None:
        state = self.agent(event.agent)
        if state.vote is not None:
            _end(state.vote, event.newer_label)
            state.vote = None
        # Its turn is over until the orchestrator starts it again.
        if state.status == "voted":
            state.status = "waiting"

    def _agent_restarted(self, event: ev.AgentRestarted) -> None:
        state = self.agent(event.agent)
        state.restarts += 1
        state.status = "restarting"

    def _agent_failed(self, event: ev.AgentFailed) -> None:
        state = self.agent(event.agent)
        state.status = "failed"
        state.error = event.error
        state.stopped = event.stopped

    def _presentation_started(self, event: ev.PresentationStarted) -> None:
        self.presenter = event.agent
        self.strategy = event.strategy
        self.phase = "presenting"
        self.agent(event.agent).status = "presenting"

    def _orchestration_restarted(self, event: ev.OrchestrationRestarted) -> None:
        """The coordination starts over: the answers and votes shown are the new
        attempt's (events.jsonl keeps every attempt's); what was spent stays."""
        self.attempt, self.max_attempts = event.attempt, event.max_attempts
        self.restarts.append(event)
        self.phase, self.outcome, self.verdict = "coordinating", None, None
        self.presenter = self.strategy = None
        self.final_parts = []
        self.votes = []
        self.checks, self.final_check = {}, None
        for agent_id, state in self.agents.items():
            self.agents[agent_id] = AgentState(label=state.label)

    def _run_finished(self, event: ev.RunFinished) -> None:
        self.finished = event.outcome
        self.phase = "finished"
        for agent_id, error in event.outcome.failed_agents.items():
            self.agent(agent_id).status = "failed"
            self.agent(agent_id).error = error
        for state in self.agents.values():
            if state.status != "failed":
                state.status = "done"


def _end(vote: LoggedVote, by: str) -> None:
    vote.standing = False
    vote.ended_by = by
