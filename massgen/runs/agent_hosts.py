"""Members whose backend runs a whole agent (`backends.base.AgentHost`: Claude Code) get
their workspace, the run's permission engine over each of their own tool calls, their
guarded toolbox and the run's event sink (`Binding`). Called by `equipment.equip` once
the engine exists; a member left unbound runs nothing (its backend refuses the turn).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.backends.base import AgentHost, Binding
from massgen.core.effects import External
from massgen.core.toolbox import ToolContext
from massgen.permissions.guarded import REFUSED
from massgen.permissions.risk import Zones

if TYPE_CHECKING:
    from massgen.coordination.agent import Member
    from massgen.permissions.engine import Engine
    from massgen.runs.setting import Setting

Decide = Callable[[str, str, Mapping[str, Any]], Any]


def bind(
    setting: Setting, members: Sequence[Member], engine: Engine | None, readable: tuple[Path, ...]
) -> None:
    """Bind every agent host among `members` that has a workspace."""
    from massgen.runs import wiring

    ws = setting.workspaces
    zones = wiring.zones_of(ws, readable)
    contexts = tuple(c.root for c in ws.contexts.paths) if ws and ws.contexts else ()
    for member in members:
        host, workspace = member.backend, member.workspace
        if not isinstance(host, AgentHost) or workspace is None:
            continue
        decide = _decider(host, engine, member.id, workspace, zones)
        host.bind(Binding(member.id, workspace, decide, member.toolbox, setting.emit, contexts))


def _decider(
    host: AgentHost,
    engine: Engine | None,
    agent: str,
    workspace: Path,
    zones: Callable[[ToolContext], Zones],
) -> Decide:
    """The engine's verdict on one of the host's calls: None (allowed) or the refusal
    the agent reads. A call whose effects cannot be told is refused, and recorded."""
    from massgen.permissions.engine import Call

    ctx = ToolContext(agent, "coordination", workspace)

    async def decide(call_id: str, tool: str, arguments: Mapping[str, Any]) -> str | None:
        if engine is None:  # `permissions: false`, said loudly when the run started
            return None
        text = json.dumps(dict(arguments))[:4000]
        try:
            effects = host.effects(tool, arguments, workspace)
        except Exception as error:
            unjudged = (External("<unjudged>", tool),)
            call = Call(agent, tool, unjudged, zones(ctx), "coordination", call_id, text)
            decision = await engine.refuse(call, str(error) or type(error).__name__)
        else:
            call = Call(agent, tool, effects, zones(ctx), "coordination", call_id, text)
            decision = await engine.decide(call)
        if decision.allowed:
            return None
        return REFUSED.format(reason=_unnamed(decision.reason, workspace))

    return decide


def _unnamed(reason: str, workspace: Path) -> str:
    """The agent reads its workspace as `<workspace>` (its real path names the run)."""
    for root in sorted({str(workspace), os.path.realpath(workspace)}, key=len, reverse=True):
        reason = reason.replace(root, "<workspace>")
    return reason
