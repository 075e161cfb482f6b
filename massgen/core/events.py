"""The event stream: everything a run does, as a closed union of small frozen records.

The terminal views, the log directory, `status.json`, automation output and the Python
`stream()` API are all derived from these events; none of them drives coordination.

`agent` is always the user's own agent id from the config (the user may see it); models
only ever see anonymised labels such as `agent2.3`.

The tool events are declared in `core/tool_events.py` and the base class in
`core/event_base.py`; this module re-exports them, so every event is imported from here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, get_args

from massgen.core.event_base import Event
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.core.tool_events import (
    AgentWarning,
    HostedToolUsed,
    PermissionDecided,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolSourceFailed,
)
from massgen.core.types import HostedActivity, Source, Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(Event):
    kind: ClassVar[str] = "run_started"
    question: str
    agents: tuple[str, ...]
    labels: dict[str, str]  # agent id -> anonymous label stem ("agent2")
    log_dir: str | None = None
    turn: int = 1
    # The run's spending limit, if it has one (`--max-tokens`, `--max-cost`).
    max_tokens: int | None = None
    max_cost: float | None = None
    seed: int | None = None  # the run's seed (labels, orders): a resume needs it
    attempt: int = 1  # 2 and on: resumed from the journal of the attempts before


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentStarted(Event):
    """An agent began one run: a fresh context with the answers current at this moment."""

    kind: ClassVar[str] = "agent_started"
    agent: str
    run: int  # 1 for the first run of this agent, 2 after its first restart, ...
    answers_in_view: tuple[str, ...]  # labels it can see
    vote_only: bool = False
    json_actions: bool = False  # its text deltas are a JSON action, not prose


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(Event):
    kind: ClassVar[str] = "text"
    agent: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta(Event):
    kind: ClassVar[str] = "reasoning"
    agent: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PersonaAssigned(Event):
    """Before coordination, the persona generated for one agent (`persona_generator`): in
    its system prompt until its first answer, then dropped, softened or kept
    (`after_first_answer`)."""

    kind: ClassVar[str] = "persona_assigned"
    agent: str
    persona: str
    summary: str = ""  # a few words, when the generator gave them
    after_first_answer: str = "drop"


@dataclass(frozen=True, slots=True, kw_only=True)
class CriteriaGenerated(Event):
    """Before coordination, the task's evaluation criteria (`evaluation_criteria_generator`),
    shown to every agent; `agent` is the one whose model wrote them."""

    kind: ClassVar[str] = "criteria_generated"
    agent: str
    criteria: tuple[str, ...]  # each as the agents read it: "E1 (primary): ..."
    aspiration: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionParaphrased(Event):
    """Before coordination, the rephrasing of the question one agent reads after the
    original (`question_paraphraser`); `variant` is its index among those generated."""

    kind: ClassVar[str] = "question_paraphrased"
    agent: str
    paraphrase: str
    variant: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class GeneratorFailed(Event):
    """A generation before coordination (`what`: "personas", "criteria" or "paraphrases")
    failed; the run goes on without it. `agent` is the one whose model was asked."""

    kind: ClassVar[str] = "generator_failed"
    agent: str
    what: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastAsked(Event):
    """An agent asked a question with `ask_others` (`coordination.broadcast`): to the
    agents in `to` (their ids), or to the person (`to == ("human",)`)."""

    kind: ClassVar[str] = "broadcast_asked"
    agent: str
    request_id: str
    question: str
    to: tuple[str, ...]
    wait: bool = True  # the call waits for the answers; else they come with its next call


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastAnswered(Event):
    """One answer to a question of `agent`'s, from `responder` (an agent id, or "human").
    `ok` False: no answer (the deadline passed, the call failed, no person to ask), and
    `answer` says why."""

    kind: ClassVar[str] = "broadcast_answered"
    agent: str  # who asked
    request_id: str
    responder: str
    answer: str
    ok: bool = True
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerPublished(Event):
    kind: ClassVar[str] = "answer_published"
    agent: str
    label: str  # "agent2.3"
    content: str
    files: tuple[str, ...] = ()  # its workspace's changes since its last: "+ a", "~ b", "- c"
    diff: str = ""  # those changes as a unified diff, bounded (`workspace/changes.py`)


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerChecked(Event):
    """The run's `verifier:` checked an answer as it was published (`label`), or the
    final presentation's text (`phase="presentation"`, `label` the selected answer's).
    `verdict`: passed, failed or unchecked (`core/checks.py`); `excerpt`: its output, bounded."""

    kind: ClassVar[str] = "answer_checked"
    agent: str
    label: str
    verdict: str
    note: str = ""
    excerpt: str = ""
    duration_s: float = 0.0
    phase: str = "coordination"  # or "presentation"


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteCast(Event):
    kind: ClassVar[str] = "vote_cast"
    agent: str
    voter_label: str  # the voter's anonymous stem ("agent1")
    target: str  # the agent id voted for
    target_label: str  # the answer label voted for ("agent2.3")
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteInvalidated(Event):
    """A standing vote stopped counting because a newer answer appeared."""

    kind: ClassVar[str] = "vote_invalidated"
    agent: str
    target_label: str
    newer_label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionRejected(Event):
    """The agent's workflow action was invalid; it was told why and may try again."""

    kind: ClassVar[str] = "action_rejected"
    agent: str
    reason: str
    attempt: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRestarted(Event):
    kind: ClassVar[str] = "agent_restarted"
    agent: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentFailed(Event):
    kind: ClassVar[str] = "agent_failed"
    agent: str
    error: str
    stopped: bool = False  # the person stopped it (the app's key), it did not fail


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageReported(Event):
    """One model call's tokens; `usage.estimated` when counted from text length because
    the provider reported none (a call cut short)."""

    kind: ClassVar[str] = "usage"
    flat: ClassVar[str] = "usage"  # the token counts, as they always have been
    agent: str
    usage: Usage
    cost_usd: float | None = None
    phase: str = "coordination"  # or "presentation"


@dataclass(frozen=True, slots=True, kw_only=True)
class CoordinationFinished(Event):
    kind: ClassVar[str] = "coordination_finished"
    winner: str | None
    winner_label: str | None
    tally: dict[str, int]  # answer label -> standing votes
    reason: str  # "consensus", "deadline", "answer limit", "all agents failed", ...
    tie_break: str | None = None
    # How the independent first answers agreed: "3 of 3 first answers agree (numeric: 72)".
    agreement: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PresentationStarted(Event):
    kind: ClassVar[str] = "presentation_started"
    agent: str
    strategy: str
    # An evaluation follows, which may restart the coordination: this text may not be the
    # final answer (`RunFinished.answer` is).
    may_restart: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FinalTextDelta(Event):
    kind: ClassVar[str] = "final_text"
    agent: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationStarted(Event):
    """After the final presentation, the winner checks the final answer of `attempt` and
    either submits it or restarts the coordination (`max_orchestration_restarts`).
    `debug_override`: it checks `orchestrator.debug_final_answer` instead."""

    kind: ClassVar[str] = "evaluation_started"
    agent: str
    attempt: int
    debug_override: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationFinished(Event):
    """The winner's verdict on the final answer: `submitted`, or a restart was asked for
    (`OrchestrationRestarted` follows). `note`: how ("confirmed", "no tool call", ...)."""

    kind: ClassVar[str] = "evaluation_finished"
    agent: str
    attempt: int
    submitted: bool
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class OrchestrationRestarted(Event):
    """The whole coordination starts over as `attempt` (2, 3, ...) of `max_attempts`, with
    fresh agent states; every agent's message carries `reason` and `instructions`, and
    the answer that was found wanting (`previous_answer`)."""

    kind: ClassVar[str] = "orchestration_restarted"
    attempt: int
    max_attempts: int
    agent: str  # who asked for it: the winner of the attempt before
    reason: str
    instructions: str
    previous_answer: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(Event):
    kind: ClassVar[str] = "run_finished"
    flat: ClassVar[str] = "outcome"  # its fields, as they always have been
    outcome: Outcome


AnyEvent = (
    RunStarted
    | AgentStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallProgress
    | ToolCallFinished
    | HostedToolUsed
    | ToolSourceFailed
    | AgentWarning
    | SubagentStarted
    | SubagentFinished
    | PermissionDecided
    | BroadcastAsked
    | BroadcastAnswered
    | AnswerPublished
    | AnswerChecked
    | VoteCast
    | VoteInvalidated
    | ActionRejected
    | AgentRestarted
    | AgentFailed
    | UsageReported
    | CoordinationFinished
    | PresentationStarted
    | FinalTextDelta
    | RunFinished
    | EvaluationStarted
    | EvaluationFinished
    | OrchestrationRestarted
    | PersonaAssigned
    | CriteriaGenerated
    | QuestionParaphrased
    | GeneratorFailed
)

# The JSON "type" of each event, as each class declares it.
_TYPE_BY_KIND: dict[str, type[AnyEvent]] = {cls.kind: cls for cls in get_args(AnyEvent)}


def event_from_dict(data: dict[str, Any]) -> AnyEvent:
    """Rebuild an event from `to_dict()` output (e.g. a line of events.jsonl)."""
    cls = _TYPE_BY_KIND[data["type"]]
    names = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names}
    for key in ("agents", "answers_in_view", "criteria", "to", "files"):
        if isinstance(kwargs.get(key), list):
            kwargs[key] = tuple(kwargs[key])
    if cls is UsageReported:
        kwargs["usage"] = _embedded(Usage, data)
    if cls is HostedToolUsed:
        sources = tuple(s if isinstance(s, Source) else Source(**s) for s in data["sources"])
        kwargs["activity"] = _embedded(HostedActivity, data, id=data["call_id"], sources=sources)
    if cls is RunFinished:
        kwargs["outcome"] = _embedded(Outcome, data, status=Status(data["status"]))
    return cls(**kwargs)


def _embedded(record: Any, data: dict[str, Any], **given: Any) -> Any:
    """The record an event embeds, from the fields its JSON line holds (`given`: read else)."""
    names = {f.name for f in fields(record)} - set(given)
    return record(**{k: v for k, v in data.items() if k in names}, **given)
