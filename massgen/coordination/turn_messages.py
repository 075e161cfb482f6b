"""How one model reply of a run is read, and what the model reads back after it.

A reply is the text and the tool calls of one model call (`agent.py` streams it). Read
here: which workflow action it states and which of its calls run as tools. Written here:
the messages that carry its tool results, the correction of an invalid action, and the
note that the last tool round has been used.

A reply that calls a tool *and* a workflow tool: the tools run, and the workflow call is
answered "not accepted yet", since it was decided before the model read their results;
it calls it again next turn. Calls to tools it does not have beside a workflow call are
ignored, as they always were.
"""

from __future__ import annotations

import uuid

from massgen.coordination import actions
from massgen.coordination.runaway import corrective
from massgen.core.toolbox import ToolResult
from massgen.core.types import Message, ToolCall

LAST_ROUND = (
    "You have used all {n} tool rounds of this turn; no more tools. Finish now with the "
    "workflow action: your answer or your vote."
)

_NOT_YET = (
    "Not accepted: you called other tools in the same turn, so this was decided before "
    "you read their results. Read them, then call `{name}` again."
)


# Of a reply stopped by a guard, what the model reads back before the correction.
_KEPT_CHARS = 2000


def action_of(text: str, calls: list[ToolCall], *, structured: bool, tools: bool) -> actions.Action:
    if structured and not calls:
        return actions.parse_json_action(text, tools=tools)
    return actions.parse_tool_calls(calls)


def tool_calls(calls: list[ToolCall], action: actions.Action, own: set[str]) -> list[ToolCall]:
    """The calls of this reply to run as tools (none: the reply is a workflow action)."""
    if isinstance(action, actions.UseTool):
        return [action.call(f"json_{uuid.uuid4().hex[:12]}")]
    others = [c for c in calls if c.name not in actions.WORKFLOW_TOOLS]
    if len(others) == len(calls):
        return others  # unknown names too: the toolbox answers "not available"
    return others if any(c.name in own for c in others) else []


def tool_messages(
    text: str,
    calls: list[ToolCall],
    ran: list[ToolCall],
    results: list[ToolResult],
    *,
    structured: bool,
) -> list[Message]:
    """The reply (`text`, `calls`) and the results of the calls that `ran` as the model
    reads them next. A JSON-action model has no tool calls on the wire, so its results
    come back as a user message."""
    if structured and not calls:
        (call,), (result,) = ran, results
        note = (
            f"Result of tool `{call.name}`:\n{result.content}\n\nReply with your next JSON action."
        )
        return [Message("assistant", text), Message("user", note)]
    by_id = {result.call_id: result.content for result in results}
    answers = [
        Message("tool", by_id.get(call.id, _NOT_YET.format(name=call.name)), tool_call_id=call.id)
        for call in calls
    ]
    return [Message("assistant", text, tuple(calls)), *answers]


def correction(text: str, calls: list[ToolCall], reason: str, *, structured: bool) -> list[Message]:
    """The reply and why its action was not accepted, as the model reads them next."""
    if not calls:
        note = reason if structured else f"{reason} Make sure you actually call the tool."
        return [Message("assistant", text), Message("user", note)]
    results = [Message("tool", f"Error: {reason}", tool_call_id=call.id) for call in calls]
    return [Message("assistant", text, tuple(calls)), *results]


def cut_short(text: str, reason: str) -> list[Message]:
    """A reply a runaway guard stopped (its start) and why, as the model reads them next."""
    return [Message("assistant", text[:_KEPT_CHARS]), Message("user", corrective(reason))]
