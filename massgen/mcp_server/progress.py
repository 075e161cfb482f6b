"""What the calling agent's user sees while the team works: one line per answer, vote,
tool call and turning point, sent as MCP progress notifications.

Stream chunks are not sent (far too many; the answer comes with the result). Each line
is cut to `MAX_LINE` characters and a run sends at most `MAX_MESSAGES` lines, so a chatty
team cannot flood the client.
"""

from __future__ import annotations

from massgen.core import events as ev

MAX_LINE = 300
MAX_MESSAGES = 500
WORKFLOW_TOOLS = frozenset({"new_answer", "vote"})  # shown as answers and votes instead


def describe(event: ev.AnyEvent) -> str | None:
    """The progress line for `event`, or None for events the user need not see."""
    line = _line(event)
    if line is None:
        return None
    line = " ".join(line.split())
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def _line(event: ev.AnyEvent) -> str | None:
    if isinstance(event, ev.RunStarted):
        where = f"; logs: {event.log_dir}" if event.log_dir else ""
        return f"team started: {', '.join(event.agents)}{where}"
    if isinstance(event, ev.AnswerPublished):
        return f"{event.agent} answered ({event.label}): {event.content}"
    if isinstance(event, ev.VoteCast):
        return f"{event.agent} voted for {event.target_label}: {event.reason}"
    if isinstance(event, ev.ToolCallStarted) and event.name not in WORKFLOW_TOOLS:
        return f"{event.agent} calls {event.name}({event.arguments})"
    if isinstance(event, ev.ToolCallFinished) and event.name not in WORKFLOW_TOOLS:
        return f"{event.agent}: {event.name} {'done' if event.ok else 'failed'}"
    if isinstance(event, ev.PermissionDecided) and not event.allowed:
        return f"{event.agent}: {event.tool} denied ({event.reason})"
    if isinstance(event, ev.AgentFailed):
        return f"{event.agent} failed: {event.error}"
    if isinstance(event, ev.CoordinationFinished):
        return f"coordination finished ({event.reason}); winner: {event.winner or 'none'}"
    if isinstance(event, ev.PresentationStarted):
        return f"{event.agent} presents the final answer"
    if isinstance(event, ev.RunFinished):
        return f"run finished: {event.outcome.status}"
    return None
