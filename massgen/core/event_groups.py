"""The event union in five groups, each of which a consumer handles alike.

A consumer dispatches on the group first and then on the event inside it, one small
function per group. The log table does it through `by_group`:

    return groups.by_group(event, stream=..., tool=_tool_line, decision=..., aid=..., progress=...)
    # each a `match` over its group, ending in `assert_never`

A consumer that sees every event of a run as it happens (the run's state, a view's model,
the plain view) subclasses `GroupFold`, whose `fold(event)` calls its `on_<group>` method.

Every event is in exactly one group (`tests/core/test_events.py`), so `by_group`, which
checks all five and then calls `assert_never`, covers the whole union.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar, assert_never, get_args

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


class GroupFold(ABC, Generic[T]):
    """A consumer that folds each group of events in a method of its own; `fold` returns
    what that method returns (`T`: None for a fold that only keeps state)."""

    # Each event class's `on_<group>` method, built once per subclass: a fold sees every
    # event of a run (thousands of deltas), and one dict lookup costs a fraction of
    # `by_group`'s call (`bench/`: section 5, consumer alone).
    _fold_of: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        methods: tuple[Callable[[Any, Any], Any], ...] = (
            cls.on_stream,
            cls.on_tool,
            cls.on_decision,
            cls.on_aid,
            cls.on_progress,
        )
        cls._fold_of = {
            kind: method
            for group, method in zip(GROUPS, methods, strict=True)
            for kind in get_args(group)
        }

    def fold(self, event: ev.AnyEvent) -> T:
        method = self._fold_of.get(type(event))
        if method is not None:
            return method(self, event)
        return by_group(  # a subclass of an event class: found by isinstance
            event,
            stream=self.on_stream,
            tool=self.on_tool,
            decision=self.on_decision,
            aid=self.on_aid,
            progress=self.on_progress,
        )

    @abstractmethod
    def on_stream(self, event: AgentStream) -> T: ...

    @abstractmethod
    def on_tool(self, event: ToolActivity) -> T: ...

    @abstractmethod
    def on_decision(self, event: Decision) -> T: ...

    @abstractmethod
    def on_aid(self, event: AidActivity) -> T: ...

    @abstractmethod
    def on_progress(self, event: RunProgress) -> T: ...
