"""The event union in five groups, each of which a consumer handles alike.

A view, the log table and the run's state each dispatch on the group first and then on
the event inside it, one small function per group:

    if isinstance(event, groups.ToolActivity):
        return _tool_line(event)      # a `match` over the group, ending in `assert_never`

Every event is in exactly one group (`tests/core/test_events.py`), so a consumer that
checks all five and then calls `assert_never` still covers the whole union.
"""

from __future__ import annotations

from massgen.core import events as ev

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
