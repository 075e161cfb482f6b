"""What one `TeamRun` gives its members and its orchestrator before coordination.

    equip(setting, members, stack)   each member's toolbox, in this order:
        1. the run's tools (MCP servers, custom tools, ...; opened here unless a chat
           session holds them), plus the subagent tools with `enable_subagents` (their
           background children end with the run, and announce themselves in the
           members' inboxes after step 4)
        2. the workspace's file tools, for a member with a workspace
        3. the skill tools (`use_skills`) and `ask_others` (`coordination.broadcast`)
        4. the permission engine around all of the above, so no call passes around it
        5. file-search uploads, last: the engine decides each file they read
    aids_for(setting, ...)  personas, criteria, paraphrases, the changedoc, broadcasts
    memories_for(setting)   the agents' filesystem memory

Equipping reads the run through its `Setting` and changes nothing on it: what it makes
that the run keeps (the members, the permission engine, the broadcasts, the sinks that
hear the run's events) comes back as one frozen `Equipment`. Tools this run opens close
with `stack`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.coordination.aids import Aid, Aids, configured
from massgen.core import events as ev
from massgen.core.toolbox import Toolbox, Toolboxes
from massgen.runs.setting import Setting, Sink
from massgen.runs.toolboxes import open_tools
from massgen.workspace.team import run_name

if TYPE_CHECKING:
    from massgen.coordination.agent import Member
    from massgen.coordination.aids.broadcast import Broadcasts
    from massgen.permissions.engine import Engine


@dataclass(frozen=True, slots=True)
class Equipment:
    """What equipping made that the run keeps. `permissions`: the run's engine (None when
    the config turns it off); `broadcasts`: questions between agents, for the
    orchestrator; `sinks`: also hear the run's events (the subagents')."""

    members: tuple[Member, ...]
    permissions: Engine | None = None
    broadcasts: Broadcasts | None = None
    sinks: tuple[Sink, ...] = ()


async def equip(
    setting: Setting, members: list[Member], stack: contextlib.AsyncExitStack
) -> Equipment:
    """`members`, each with its toolbox (see the module docstring for the order)."""
    boxes = await _opened_tools(setting, stack)
    subagents = None
    if setting.loaded.config.orchestrator.coordination.enable_subagents:
        from massgen.runs.subagents import Subagents
        from massgen.runs.toolboxes import joined

        subagents = Subagents(setting)  # its background children end with the run
        stack.push_async_callback(subagents.aclose)
        boxes = joined(boxes, subagents.toolboxes)
    members = [replace(m, toolbox=boxes[m.id]) if m.id in boxes else m for m in members]
    members = _with_workspaces(setting, members)
    members, folders = _with_skills(setting, members)
    members, broadcasts = _with_broadcast(setting, members, stack)
    members, engine = _guarded(setting, members, folders)
    from massgen.runs import agent_hosts

    agent_hosts.bind(setting, members, engine, folders)
    if subagents is not None:  # after broadcast, which sets each member's inbox
        members = subagents.with_notes(members)
    members = await _uploaded(setting, engine, members, stack)
    sinks = (subagents.on_event,) if subagents is not None else ()
    return Equipment(tuple(members), engine, broadcasts, sinks)


async def _opened_tools(
    setting: Setting, stack: contextlib.AsyncExitStack
) -> Mapping[str, Toolbox]:
    """The caller's toolboxes, else the run's own, open until `stack` closes."""
    if setting.toolboxes is not None:
        return setting.toolboxes
    loaded = setting.loaded
    return await stack.enter_async_context(
        open_tools(
            loaded.config,
            log_dir=setting.log_dir,
            source=loaded.source,
            single=loaded.single,
            failed=setting.tool_failed,
            headless=setting.approver is None,
        )
    )


def _with_workspaces(setting: Setting, members: list[Member]) -> list[Member]:
    """Each member with a workspace gets it, and the file tools over it."""
    ws = setting.workspaces
    if ws is None:
        return members
    return [
        replace(m, toolbox=Toolboxes([ws.files, m.toolbox]), workspace=ws.path(m.id))
        if m.id in ws.agents
        else m
        for m in members
    ]


def _with_skills(setting: Setting, members: list[Member]) -> tuple[list[Member], tuple[Path, ...]]:
    """With `use_skills`: the skill tools and the skills' list for every member, found
    afresh each run (a chat's next turn sees a skill added meanwhile), and the skill
    folders, which the engine lets members read."""
    if not setting.loaded.config.orchestrator.coordination.use_skills:
        return members, ()
    from massgen.tools import skills

    catalog = skills.discover(skills.sources_of(setting.loaded.config))
    for warning in catalog.warnings:
        print(f"massgen: warning: {warning}", file=sys.stderr)
    box = skills.SkillToolbox(catalog)
    note = skills.prompt_section(catalog)
    equipped = [
        replace(
            m,
            toolbox=Toolboxes([m.toolbox, box]) if m.toolbox.specs() else box,
            notes=(*m.notes, note),
        )
        for m in members
    ]
    return equipped, catalog.roots()


def _with_broadcast(
    setting: Setting, members: list[Member], stack: contextlib.AsyncExitStack
) -> tuple[list[Member], Broadcasts | None]:
    """With `coordination.broadcast`: `ask_others` for every member, answered by the team
    or by the person at the approver's prompt (`coordination/aids/broadcast.py`)."""
    from massgen.coordination.aids import broadcast

    settings = broadcast.Settings.of(setting.loaded.config.orchestrator.coordination)
    if settings is None:
        return members, None
    person = setting.approver if isinstance(setting.approver, broadcast.Person) else None
    broadcasts = broadcast.Broadcasts(settings, person)
    stack.push_async_callback(broadcasts.aclose)
    return broadcast.equip(members, broadcasts), broadcasts


def _guarded(
    setting: Setting, members: list[Member], readable: tuple[Path, ...]
) -> tuple[list[Member], Engine | None]:
    """Every member's toolbox behind the permission engine (`permissions/`), after all
    its tools are composed, so that no call passes around it. `readable`: folders the
    members may read (the skills')."""
    from massgen.runs import wiring

    config = setting.loaded.config
    emit = setting.emit
    engine = wiring.engine_for(
        config,
        log_dir=setting.log_dir,
        approver=setting.approver,
        emit=lambda call, decision: emit(_decided(call, decision)),
        session=setting.session_grants,
    )
    if engine is None:
        return members, None
    boxes = wiring.guard(
        {m.id: m.toolbox for m in members},
        engine,
        setting.workspaces,
        wiring.unguarded(config),
        readable=readable,
    )
    from massgen.coordination.prompts import PERMISSIONS_NOTE

    guarded = [
        replace(
            m,
            toolbox=boxes[m.id],
            notes=(*m.notes, PERMISSIONS_NOTE) if m.toolbox.specs() else m.notes,
        )
        for m in members
    ]
    return guarded, engine


def _decided(call: Any, decision: Any) -> ev.PermissionDecided:
    return ev.PermissionDecided(
        agent=call.agent,
        call_id=call.call_id,
        tool=call.tool,
        allowed=decision.allowed,
        operator=decision.operator,
        reason=decision.reason,
        rule=decision.rule,
        risk=decision.risk,
        seq=decision.seq,
        phase=call.phase,
    )


async def _uploaded(
    setting: Setting,
    engine: Engine | None,
    members: list[Member],
    stack: contextlib.AsyncExitStack,
) -> list[Member]:
    """Members with `upload_files` get file search over their files, uploaded now (after
    the permission engine exists: it decides each read) and deleted with `stack`."""
    from massgen.runs.uploads import open_uploads

    loaded = setting.loaded
    uploads = open_uploads(
        loaded.config,
        members,
        engine=engine,
        name=f"massgen-{run_name(setting.log_dir)}",
        source=loaded.source,
        single=loaded.single,
    )
    equipped: list[Member] = await stack.enter_async_context(uploads)
    return equipped


def aids_for(setting: Setting, *made: Aid) -> Aids | None:
    """The aids the config asks for (`coordination/aids/`: personas, criteria,
    paraphrases, the changedoc), then `made`, those equipping made (the broadcasts); a
    resumed run takes what its journal says was generated."""
    aids = configured(setting.loaded.config.orchestrator.coordination, *made)
    if aids is not None and setting.resumed and setting.log_dir is not None:
        from massgen.record.journal import JournalError, read_journal

        try:
            aids.restore(read_journal(setting.log_dir / "events.jsonl"))
        except (OSError, JournalError):  # resuming read it already; go on without
            aids.restore(())
    return aids


def memories_for(setting: Setting) -> Any:
    """The agents' filesystem memory (`workspace/memory.py`), when the config keeps one;
    a new chat turn (not a resumed one) starts from the last turn's memories."""
    coordination = setting.loaded.config.orchestrator.coordination
    if not coordination.enable_memory_filesystem_mode or setting.workspaces is None:
        return None
    from massgen.workspace import memory

    ws = setting.workspaces
    if setting.previous_workspace is not None and not setting.resumed:
        try:
            memory.carry(setting.previous_workspace, [ws.path(agent) for agent in ws.agents])
        except OSError as error:  # the turn goes on, from the memories it has
            print(f"massgen: warning: memories not carried ({error})", file=sys.stderr)
    bounds = memory.MemoryBounds(
        coordination.memory_max_short_term,
        coordination.memory_max_chars,
        coordination.memory_max_long_term,
    )
    return memory.TeamMemory(ws, bounds)
