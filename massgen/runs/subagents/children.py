"""Subagents as child team runs: what `spawn_subagents` (`tool.py`) runs.

A child is a `TeamRun` in this process (no subprocess: it shares the event loop, so a
cancel reaches it at once and its `async with` blocks close with the parent's):

    team        one agent on the spawning agent's own backend, or, with
                `subagent_orchestrator: {enabled: true, agents: [...]}`, a team of those
    config      the parent's, with those agents, no subagents (so no nesting), no MCP
                servers, no context paths (it sees its task, its context and its own
                directory), `subagent_orchestrator.max_new_answers`, and a deadline a little
                inside the time the tool has left, so the child ends with its best answer
                before the tool cuts it off
    workspace   `subagents/<id>/` of the spawning agent's workspace (one agent works right
                there; a team's agents in `<id>/<n>/`), so its files are part of the
                parent's answer snapshot; its store lies beside the parent's
    log         `<parent log>/subagents/<agent>/<id>/`, a full run log of its own
    events      the parent's stream gets `SubagentStarted` / `SubagentFinished` and the
                child's usage, charged to the spawning agent (`UsageReported`), so the
                parent's costs and budget count it
    budget      each child may spend what is left of the parent's budget, split over
                `subagent_max_concurrent`
    permissions the child's own engine over the same config; the parent's approver
                answers its asks
    background  with `spawn_subagents(..., background=true)` a child is a task of the
                parent's run (`jobs.py`); `Subagents` gives each member an
                inbox of notes on the ones that ended, cancels those still running when
                the coordination ends (a `CoordinationFinished` seen by its sink, so
                their spending is in the run's outcome), and awaits them all when the run
                closes (`aclose`, on the run's exit stack, Ctrl-C included)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from massgen.config.coordination import SubagentAgentConfig
from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.config.subagent_types import DEFAULT_TYPES, ROLES
from massgen.core import events as ev
from massgen.core.toolbox import ToolContext
from massgen.core.usage import Spend
from massgen.runs.loading import LoadedConfig
from massgen.runs.setting import ChildResult, ChildRun, Setting
from massgen.runs.subagents.jobs import JobLimits, Jobs
from massgen.runs.subagents.tool import (
    SUBAGENTS_DIR,
    ChildOutcome,
    ChildTask,
    Limits,
    Status,
    SubagentToolbox,
)
from massgen.workspace.team import Workspaces

if TYPE_CHECKING:
    from massgen.coordination.agent import Member

SUBAGENT_NOTE = (
    "You are a subagent: another agent gave you one task, and your answer goes back to "
    "it. Do the task and answer with what it asks for, complete and self-contained; you "
    "cannot ask questions back."
)
# Seconds a child's own deadline keeps inside the time the tool gives it.
INSIDE_SECONDS = 1.0


class Subagents:
    """One parent run's subagents: each agent's toolbox (`toolboxes`), and the run's
    background children (`jobs`). The run calls `with_notes` on its equipped members,
    sends its events to `on_event` and awaits `aclose` when it ends."""

    def __init__(self, parent: Setting) -> None:
        coordination = parent.loaded.config.orchestrator.coordination
        limits = Limits(coordination.subagent_default_timeout, coordination.subagent_max_concurrent)
        names = (
            coordination.subagent_types
            if coordination.subagent_types is not None
            else DEFAULT_TYPES
        )
        roles = {name: ROLES[name] for name in names}
        background = coordination.background_subagents
        self.jobs: Jobs | None = None
        if background.enabled:
            self.jobs = Jobs(JobLimits(background.max_per_agent, background.max_per_run))
        children = Children(parent)
        self.toolboxes = {
            agent.id: SubagentToolbox(children.run, limits, roles, self.jobs)
            for agent in parent.loaded.config.agents
        }

    def with_notes(self, members: Sequence[Member]) -> list[Member]:
        """Each member's inbox also brings the notes on its background children that
        ended (after its other messages: `ask_others` answers)."""
        if self.jobs is None:
            return list(members)
        return [
            replace(m, inbox=_both(m.inbox, functools.partial(self.jobs.notes, m.id)))
            if m.id in self.toolboxes
            else m
            for m in members
        ]

    def on_event(self, event: ev.AnyEvent) -> None:
        if isinstance(event, ev.CoordinationFinished) and self.jobs is not None:
            self.jobs.cancel_all()

    async def aclose(self) -> None:
        if self.jobs is not None:
            await self.jobs.aclose()


Inbox = Callable[[], tuple[str, ...]]


def _both(first: Inbox | None, second: Inbox) -> Inbox:
    if first is None:
        return second
    return lambda: (*first(), *second())


class Children:
    """Runs the children of one parent run, each started by `parent.start_child`."""

    def __init__(self, parent: Setting) -> None:
        self.parent = parent

    async def run(self, task: ChildTask, ctx: ToolContext, call_id: str) -> ChildOutcome:
        config = child_config(self.parent.loaded.config, ctx.agent, task, self._budget())
        log_dir = self._log_dir(ctx.agent, task.id)
        self._emit(
            ev.SubagentStarted(
                agent=ctx.agent,
                call_id=call_id,
                subagent=task.id,
                task=task.task,
                log_dir=str(log_dir) if log_dir else None,
                phase=ctx.phase,
            )
        )
        child = self._start(config, task, ctx, log_dir)
        started = time.monotonic()
        outcome = ChildOutcome("", "cancelled", "cancelled: the parent moved on or ended")
        try:
            outcome = _outcome(await child.execute())
            return outcome
        except Exception as error:
            outcome = ChildOutcome("", "error", f"{type(error).__name__}: {error}")
            return outcome
        finally:
            self._charge(ctx, child.ledger.total())  # what it spent, cut short or not
            self._emit(_finished(ctx, call_id, task, outcome, time.monotonic() - started))

    def _start(
        self, config: MassgenConfig, task: ChildTask, ctx: ToolContext, log_dir: Path | None
    ) -> ChildRun:
        """The child's run, made (not yet executed) by the parent's `start_child`."""
        parent = self.parent
        loaded = LoadedConfig(config, source=parent.loaded.source, env=parent.loaded.env)
        return parent.start_child(
            loaded,
            question(task),
            logs=log_dir is not None,
            log_dir=log_dir,
            deadline_seconds=max(task.deadline_seconds - INSIDE_SECONDS, 0.1),
            approver=parent.approver,
            session_grants=parent.session_grants,
            workspaces=self._workspaces(config, ctx, task),
        )

    def _emit(self, event: ev.AnyEvent) -> None:
        """Through the parent's orchestrator (its ledger counts usage), else its sinks."""
        self.parent.counted(event)

    def _charge(self, ctx: ToolContext, spent: Spend) -> None:
        if spent.usage.total_tokens or spent.cost_usd:
            self._emit(
                ev.UsageReported(
                    agent=ctx.agent, usage=spent.usage, cost_usd=spent.cost_usd, phase=ctx.phase
                )
            )

    def _budget(self) -> tuple[int | None, float | None]:
        """What each child may spend: the parent's budget left, over the children that
        may run at once. Raises RuntimeError when nothing is left."""
        settings = self.parent.loaded.config.orchestrator
        if settings.max_tokens is None and settings.max_cost is None:
            return None, None
        share = settings.coordination.subagent_max_concurrent
        spent = self.parent.spent()
        tokens = cost = None
        if settings.max_tokens is not None:
            tokens = (settings.max_tokens - spent.usage.total_tokens) // share
            if tokens < 1:
                raise RuntimeError("the run's token budget is spent")
        if settings.max_cost is not None:
            cost = (settings.max_cost - (spent.cost_usd or 0.0)) / share
            if cost <= 0:
                raise RuntimeError("the run's cost budget is spent")
        return tokens, cost

    def _log_dir(self, agent: str, child: str) -> Path | None:
        if self.parent.log_dir is None:
            return None
        return self.parent.log_dir / SUBAGENTS_DIR / agent / child

    def _workspaces(
        self, config: MassgenConfig, ctx: ToolContext, task: ChildTask
    ) -> Workspaces | None:
        """The child's workspaces inside the parent agent's, its store beside the
        parent's; None when the parent agent has no workspace."""
        parents = self.parent.workspaces
        if task.workspace is None or parents is None:
            return None
        dirs = {a.id: a.backend.cwd for a in config.agents if a.backend.cwd}
        one = len(config.agents) == 1
        root = task.workspace.parent if one else task.workspace
        store = parents.store.root / SUBAGENTS_DIR / ctx.agent / task.id
        return Workspaces(root, "", dirs, parents.limits, root=root, store=store)


def question(task: ChildTask) -> str:
    if not task.context.strip():
        return task.task
    return f"{task.task}\n\nContext from the agent that gave you this task:\n{task.context}"


def child_config(
    parent: MassgenConfig,
    agent_id: str,
    task: ChildTask,
    budget: tuple[int | None, float | None] = (None, None),
) -> MassgenConfig:
    """The config a child runs with (see the module docstring)."""
    coordination = parent.orchestrator.coordination
    spawner = next(a for a in parent.agents if a.id == agent_id)
    team = coordination.subagent_orchestrator
    if team.enabled and team.agents:
        agents = [_member(a, task, n) for n, a in enumerate(team.agents, 1)]
    else:
        agents = [_own(spawner, task)]
    if team.enable_web_search is not None:
        agents = [_searching(a, team.enable_web_search) for a in agents]
    settings = parent.orchestrator.model_copy(
        update={
            "coordination": coordination.model_copy(update={"enable_subagents": False}),
            "max_new_answers_per_agent": team.max_new_answers,
            "final_answer_strategy": team.final_answer_strategy
            or parent.orchestrator.final_answer_strategy,
            "max_tokens": budget[0],
            "max_cost": budget[1],
            "context_paths": (),  # a child sees its task and its own directory
        }
    )
    return parent.model_copy(update={"agents": agents, "orchestrator": settings})


def _system(task: ChildTask, own: str | None) -> str:
    return "\n\n".join(part for part in (own, task.role, SUBAGENT_NOTE) if part)


def _own(spawner: AgentConfig, task: ChildTask) -> AgentConfig:
    """The spawning agent's backend, as one agent working in the child's directory."""
    backend = spawner.backend.model_copy(
        update={"cwd": task.id if task.workspace else None, "mcp_servers": ()}
    )
    return AgentConfig(
        id=f"{spawner.id}.{task.id}",
        backend=backend,
        system_message=_system(task, None),
        voting_sensitivity=spawner.voting_sensitivity,
    )


def _member(agent: SubagentAgentConfig, task: ChildTask, n: int) -> AgentConfig:
    backend = agent.backend.model_copy(
        update={"cwd": f"agent_{n}" if task.workspace else None, "mcp_servers": ()}
    )
    return AgentConfig(
        id=agent.id or f"{task.id}_agent_{n}",
        backend=backend,
        system_message=_system(task, agent.system_message),
    )


def _searching(agent: AgentConfig, on: bool) -> AgentConfig:
    hosted = agent.backend.hosted.model_copy(update={"web_search": on})
    backend = agent.backend.model_copy(update={"hosted": hosted})
    return agent.model_copy(update={"backend": backend})


def _finished(
    ctx: ToolContext, call_id: str, task: ChildTask, outcome: ChildOutcome, seconds: float
) -> ev.SubagentFinished:
    return ev.SubagentFinished(
        agent=ctx.agent,
        call_id=call_id,
        subagent=task.id,
        outcome=outcome.status,
        answer=outcome.answer,
        reason=outcome.reason,
        duration_s=round(seconds, 6),
        phase=ctx.phase,
    )


def _outcome(result: ChildResult) -> ChildOutcome:
    status: Status = "completed"
    if not result.ok:
        status = "timeout" if result.status == "timeout" else "error"
    return ChildOutcome(result.answer, status, "" if result.ok else result.reason)
