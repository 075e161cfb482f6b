"""What one `api.TeamRun` gives its members and its orchestrator before coordination.

    equip(run, members, stack)   each member's toolbox, in this order:
        1. the run's tools (MCP servers, custom tools, ...; opened here unless a chat
           session holds them), plus the subagent tools with `enable_subagents` (their
           background children end with the run, and announce themselves in the
           members' inboxes after step 4)
        2. the workspace's file tools, for a member with a workspace
        3. the skill tools (`use_skills`) and `ask_others` (`coordination.broadcast`)
        4. the permission engine around all of the above, so no call passes around it
        5. file-search uploads, last: the engine decides each file they read
    aids_for(run)       personas, criteria, paraphrases and the changedoc
    memories_for(run)   the agents' filesystem memory

Tools this run opens close with `stack`. What equipping makes that the run keeps (its
permission engine, its broadcasts, the skill folders the engine may read) is set on the
run, where the CLI and the subagent runs read it.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from massgen.coordination.aids import Aids
from massgen.core import events as ev
from massgen.tools.base import Toolboxes
from massgen.tools.team import open_tools
from massgen.workspace.team import run_name

if TYPE_CHECKING:
    from massgen.api import TeamRun
    from massgen.coordination.agent import Member


async def equip(
    run: TeamRun, members: list[Member], stack: contextlib.AsyncExitStack
) -> list[Member]:
    """`members`, each with its toolbox (see the module docstring for the order)."""
    boxes = run.toolboxes
    if boxes is None:
        loaded = run.loaded
        boxes = await stack.enter_async_context(
            open_tools(
                loaded.config,
                log_dir=run.log_dir,
                source=loaded.source,
                single=loaded.single,
                failed=run.tool_failures.append,
                headless=run.approver is None,
            )
        )
    subagents = None
    if run.loaded.config.orchestrator.coordination.enable_subagents:
        from massgen.subagent_runs import Subagents
        from massgen.tools.team import joined

        subagents = Subagents(run)  # its background children end with the run
        stack.push_async_callback(subagents.aclose)
        run.sinks.append(subagents.on_event)
        boxes = joined(boxes, subagents.toolboxes)
    members = [replace(m, toolbox=boxes[m.id]) if m.id in boxes else m for m in members]
    ws = run.workspaces
    if ws is not None:
        members = [
            replace(m, toolbox=Toolboxes([ws.files, m.toolbox]), workspace=ws.path(m.id))
            if m.id in ws.agents
            else m
            for m in members
        ]
    members = _guarded(run, _with_broadcast(run, _with_skills(run, members), stack))
    if subagents is not None:  # after broadcast, which sets each member's inbox
        members = subagents.with_notes(members)
    return await _uploaded(run, members, stack)


def _with_skills(run: TeamRun, members: list[Member]) -> list[Member]:
    """With `use_skills`: the skill tools and the skills' list for every member, found
    afresh each run (a chat's next turn sees a skill added meanwhile)."""
    if not run.loaded.config.orchestrator.coordination.use_skills:
        return members
    from massgen.tools import skills

    catalog = skills.discover(skills.sources_of(run.loaded.config))
    for warning in catalog.warnings:
        print(f"massgen: warning: {warning}", file=sys.stderr)
    run.skill_folders = catalog.roots()
    return skills.equip(members, catalog)


def _with_broadcast(
    run: TeamRun, members: list[Member], stack: contextlib.AsyncExitStack
) -> list[Member]:
    """With `coordination.broadcast`: `ask_others` for every member, answered by the team
    or by the person at the approver's prompt (`coordination/broadcast.py`)."""
    from massgen.coordination import broadcast

    settings = broadcast.Settings.of(run.loaded.config.orchestrator.coordination)
    if settings is None:
        return members
    person = run.approver if isinstance(run.approver, broadcast.Person) else None
    run.broadcasts = broadcast.Broadcasts(settings, person)
    stack.push_async_callback(run.broadcasts.aclose)
    return broadcast.equip(members, run.broadcasts)


def _guarded(run: TeamRun, members: list[Member]) -> list[Member]:
    """Every member's toolbox behind the permission engine (`permissions/`), after all
    its tools are composed, so that no call passes around it."""
    from massgen.permissions import wiring

    config = run.loaded.config
    run.permissions = wiring.engine_for(
        config,
        log_dir=run.log_dir,
        approver=run.approver,
        emit=lambda call, decision: run._emit(_decided(call, decision)),
        session=run.session_grants,
    )
    if run.permissions is None:
        return members
    boxes = wiring.guard(
        {m.id: m.toolbox for m in members},
        run.permissions,
        run.workspaces,
        wiring.unguarded(config),
        readable=run.skill_folders,
    )
    from massgen.coordination.prompts import PERMISSIONS_NOTE

    return [
        replace(
            m,
            toolbox=boxes[m.id],
            notes=(*m.notes, PERMISSIONS_NOTE) if m.toolbox.specs() else m.notes,
        )
        for m in members
    ]


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
    run: TeamRun, members: list[Member], stack: contextlib.AsyncExitStack
) -> list[Member]:
    """Members with `upload_files` get file search over their files, uploaded now (after
    the permission engine exists: it decides each read) and deleted with `stack`."""
    from massgen.uploads import open_uploads

    loaded = run.loaded
    uploads = open_uploads(
        loaded.config,
        members,
        engine=run.permissions,
        name=f"massgen-{run_name(run.log_dir)}",
        source=loaded.source,
        single=loaded.single,
    )
    equipped: list[Member] = await stack.enter_async_context(uploads)
    return equipped


def aids_for(run: TeamRun) -> Aids | None:
    """Personas, criteria, paraphrases and the changedoc (`coordination/aids.py`), when
    the config asks for them; a resumed run takes what its journal says was generated."""
    aids = Aids.of(run.loaded.config.orchestrator.coordination)
    if aids is not None and run.resumed is not None and run.log_dir is not None:
        from massgen.record.journal import JournalError, read_journal

        try:
            aids.restore(read_journal(run.log_dir / "events.jsonl"))
        except (OSError, JournalError):  # resuming read it already; go on without
            aids.restore(())
    return aids


def memories_for(run: TeamRun) -> Any:
    """The agents' filesystem memory (`workspace/memory.py`), when the config keeps one;
    a new chat turn (not a resumed one) starts from the last turn's memories."""
    coordination = run.loaded.config.orchestrator.coordination
    if not coordination.enable_memory_filesystem_mode or run.workspaces is None:
        return None
    from massgen.workspace import memory

    ws = run.workspaces
    if run.previous_workspace is not None and run.resumed is None:
        try:
            memory.carry(run.previous_workspace, [ws.path(agent) for agent in ws.agents])
        except OSError as error:  # the turn goes on, from the memories it has
            print(f"massgen: warning: memories not carried ({error})", file=sys.stderr)
    bounds = memory.MemoryBounds(
        coordination.memory_max_short_term,
        coordination.memory_max_chars,
        coordination.memory_max_long_term,
    )
    return memory.TeamMemory(ws, bounds)
