"""The event union in five groups, each of which a consumer handles alike.

A view, the log table and the run's state each dispatch on the group first and then on
the event inside it, one small function per group, through `by_group`:

    return groups.by_group(event, stream=..., tool=_tool_line, decision=..., aid=..., progress=...)
    # each a `match` over its group, ending in `assert_never`

A fold that keeps state (the run's state, a view's model) subclasses `GroupFold`, whose
`fold(event)` calls its `on_<group>` method.

Every event is in exactly one group (`tests/core/test_events.py`), so `by_group`, which
checks all five and then calls `assert_never`, covers the whole union.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TypeVar, assert_never

from massgen.core import events as ev

T = TypeVar("T")

# One agent's own output: a run begins, its text and reasoning stream, the final text.
AgentStream = ev.AgentStarted | ev.TextDelta | ev.ReasoningDelta | ev.FinalTextDelta

# What an agent's tools did, and what kept a tool from being offered or run.
ToolActivity = (
    ev.ToolCallStarted
    | ev.ToolCallProgress
    | ev.ToolCallFinished
    | ev.HostedToolUsed
    | ev.SubagentStarted
    | ev.SubagentFinished
    | ev.ToolSourceFailed
    | ev.AgentWarning
    | ev.PermissionDecided
)

# One agent's moves in the coordination, and what became of them.
Decision = (
    ev.AnswerPublished
    | ev.AnswerChecked
    | ev.VoteCast
    | ev.VoteInvalidated
    | ev.ActionRejected
    | ev.AgentRestarted
    | ev.AgentFailed
)

# The optional coordination aids: generated personas, criteria, paraphrases; broadcasts.
AidActivity = (
    ev.PersonaAssigned
    | ev.CriteriaGenerated
    | ev.QuestionParaphrased
    | ev.GeneratorFailed
    | ev.BroadcastAsked
    | ev.BroadcastAnswered
)

# The run as a whole: its start, spending, the decision, presentation and evaluation,
# restarts, and its end.
RunProgress = (
    ev.RunStarted
    | ev.UsageReported
    | ev.CoordinationFinished
    | ev.PresentationStarted
    | ev.EvaluationStarted
    | ev.EvaluationFinished
    | ev.OrchestrationRestarted
    | ev.RunFinished
)

GROUPS = (AgentStream, ToolActivity, Decision, AidActivity, RunProgress)


def by_group(
    event: ev.AnyEvent,
    *,
    stream: Callable[[AgentStream], T],
    tool: Callable[[ToolActivity], T],
    decision: Callable[[Decision], T],
    aid: Callable[[AidActivity], T],
    progress: Callable[[RunProgress], T],
) -> T:
    """What the handler of `event`'s group makes of it."""
    if isinstance(event, AgentStream):
        return stream(event)
    if isinstance(event, ToolActivity):
        return tool(event)
    if isinstance(event, Decision):
        return decision(event)
    if isinstance(event, AidActivity):
        return aid(event)
    if isinstance(event, RunProgress):
        return progress(event)
    assert_never(event)


class GroupFold(ABC):
    """A consumer that folds each group of events in a method of its own."""

    def fold(self, event: ev.AnyEvent) -> None:
        by_group(
            event,
            stream=self.on_stream,
            tool=self.on_tool,
            decision=self.on_decision,
            aid=self.on_aid,
            progress=self.on_progress,
        )

    @abstractmethod
    def on_stream(self, event: AgentStream) -> None: ...

    @abstractmethod
    def on_tool(self, event: ToolActivity) -> None: ...

    @abstractmethod
    def on_decision(self, event: Decision) -> None: ...

    @abstractmethod
    def on_aid(self, event: AidActivity) -> None: ...

    @abstractmethod
    def on_progress(self, event: RunProgress) -> None: ...
