"""The events of an agent's tools (`event_groups.ToolActivity`): its calls, the provider's
hosted tools, tool sources that failed, subagents, and the permission engine's decisions.

Part of the event union; `core/events.py` re-exports them, so import them from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from massgen.core.event_base import Event
from massgen.core.types import HostedActivity


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted(Event):
    kind: ClassVar[str] = "tool_call_started"
    agent: str
    call_id: str
    name: str
    arguments: str
    phase: str = "coordination"  # or "presentation": the winner's final answer


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallProgress(Event):
    """A running tool call said how it is going (a generator tool's log yield, an MCP
    server's progress notification): for the person watching, never in the model's
    result. Bounded per call (`tools.progress`): cut short, rate-limited, capped."""

    kind: ClassVar[str] = "tool_call_progress"
    agent: str
    call_id: str
    name: str
    message: str
    phase: str = "coordination"  # or "presentation"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished(Event):
    """A tool call's result as the model reads it (cut to the size bound). `ok` is False
    for an error, a timeout or a cancelled call; `held` when planning mode kept a tool
    with side effects from running during coordination."""

    kind: ClassVar[str] = "tool_call_finished"
    agent: str
    call_id: str
    name: str
    result: str
    ok: bool
    duration_s: float = 0.0
    held: bool = False
    phase: str = "coordination"  # or "presentation"


@dataclass(frozen=True, slots=True, kw_only=True)
class HostedToolUsed(Event):
    """The provider ran one of its own tools for the agent (`enable_web_search`, ...): a
    search with its query and sources, or code with its output. Not one of our tool calls:
    it went through no toolbox and no permission check, only the config key enabling it."""

    kind: ClassVar[str] = "hosted_tool_used"
    agent: str
    activity: HostedActivity
    phase: str = "coordination"  # or "presentation"

    def to_dict(self) -> dict[str, Any]:
        # The activity's fields sit at the top level of the JSON line, its id as `call_id`.
        data = Event.to_dict(self)
        activity, phase = data.pop("activity"), data.pop("phase")
        return {**data, "call_id": activity.pop("id"), **activity, "phase": phase}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSourceFailed(Event):
    """A source of an agent's tools (an MCP server) did not start; the agent runs without
    its tools. `error` says why, with the first lines the server wrote to stderr."""

    kind: ClassVar[str] = "tool_source_failed"
    agent: str
    source: str  # the server's name in the config
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentWarning(Event):
    """Something about how an agent runs that the person watching must see before it
    matters: its commands run unsandboxed (`command_line_sandbox: none`), or are refused
    because no sandbox could be had."""

    kind: ClassVar[str] = "agent_warning"
    agent: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStarted(Event):
    """A child run of `spawn_subagents` began (`runs/subagents/`); its own events are
    in its log directory, under the parent's."""

    kind: ClassVar[str] = "subagent_started"
    agent: str  # the spawning agent
    call_id: str
    subagent: str  # the child's id, `subagent_1` or the model's name for it
    task: str
    log_dir: str | None = None
    phase: str = "coordination"


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentFinished(Event):
    kind: ClassVar[str] = "subagent_finished"
    agent: str
    call_id: str
    subagent: str
    outcome: str  # completed | timeout | error | cancelled (not a run `status`)
    answer: str  # what went back to the spawning agent
    reason: str = ""
    duration_s: float = 0.0
    phase: str = "coordination"


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecided(Event):
    """The permission engine's decision on one tool call, as its ledger records it
    (`seq` is the ledger's sequence number; 0 when it could not be written)."""

    kind: ClassVar[str] = "permission_decided"
    agent: str
    call_id: str
    tool: str
    allowed: bool
    operator: str  # floor | rule | policy | human | error
    reason: str
    rule: str = ""
    risk: str = ""
    seq: int = 0
    phase: str = "coordination"
