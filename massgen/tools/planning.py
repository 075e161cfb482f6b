"""Task-planning tools (`orchestrator.coordination.enable_agent_task_planning`, the
predecessor's key): an agent keeps a plan of its own work, a list of tasks with a status.

    create_task_plan(tasks)                       replace the plan
    add_task(description, ...)                    append one task
    update_task_status(task_id, status, notes)    pending, in_progress, completed, blocked
    get_task_plan()                               the plan as it stands

The predecessor's tool names and task fields (`id`, `description`, `verification`,
`depends_on`, `priority`), the subset that needs no other machinery. A plan belongs to one
agent for one run, in memory; with `task_planning_filesystem_mode` it is also written to
`tasks/plan.json` in the agent's workspace after every change (so it is part of the
answer's snapshot), and that write is the calls' effect. At most `max_tasks_per_plan`
tasks (the predecessor's default, 10).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from massgen.config.schema import MassgenConfig
from massgen.core import safe_open
from massgen.core.effects import Effect, Write
from massgen.core.toolbox import Toolbox, ToolContext, ToolResult
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.tools.python import PythonToolbox, tool_from_function

PLAN_FILE = Path("tasks") / "plan.json"
TOOL_NAMES = ("create_task_plan", "add_task", "update_task_status", "get_task_plan")
Status = Literal["pending", "in_progress", "completed", "blocked"]
_TEXT = 2000  # characters per task field


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1, max_length=_TEXT)
    id: str | None = Field(default=None, max_length=64)
    verification: str | None = Field(default=None, max_length=_TEXT)
    depends_on: list[str] = Field(default_factory=list, max_length=32)
    priority: Literal["low", "medium", "high"] = "medium"


class Plan:
    """One agent's tasks, in order; raises ValueError for what the model got wrong."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.tasks: list[dict[str, Any]] = []

    def create(self, tasks: list[TaskSpec]) -> None:
        if len(tasks) > self.limit:
            raise ValueError(f"a plan holds at most {self.limit} tasks, not {len(tasks)}")
        self.tasks = []
        for spec in tasks:
            self.add(spec)

    def add(self, spec: TaskSpec) -> dict[str, Any]:
        if len(self.tasks) >= self.limit:
            raise ValueError(f"the plan is full ({self.limit} tasks)")
        task_id = spec.id or f"task_{len(self.tasks) + 1}"
        if any(t["id"] == task_id for t in self.tasks):
            raise ValueError(f"a task `{task_id}` exists already")
        unknown = [d for d in spec.depends_on if not any(t["id"] == d for t in self.tasks)]
        if unknown:
            raise ValueError(f"`{task_id}` depends on tasks that are not in the plan: {unknown}")
        task = {**spec.model_dump(), "id": task_id, "status": "pending", "notes": ""}
        self.tasks.append(task)
        return task

    def update(self, task_id: str, status: Status, notes: str) -> dict[str, Any]:
        task = next((t for t in self.tasks if t["id"] == task_id), None)
        if task is None:
            known = ", ".join(t["id"] for t in self.tasks) or "none"
            raise ValueError(f"no task `{task_id}` (tasks: {known})")
        task["status"] = status
        task["notes"] = notes[:_TEXT]
        return task

    def summary(self) -> dict[str, Any]:
        counts = {s: sum(t["status"] == s for t in self.tasks) for s in get_args(Status)}
        return {"tasks": self.tasks, "counts": counts}


class PlanToolbox:
    """The planning tools of one agent."""

    def __init__(self, limit: int, on_disk: bool) -> None:
        self._plan = Plan(limit)
        self._on_disk = on_disk
        self._workspace: Path | None = None
        self._box = PythonToolbox(
            [
                tool_from_function(self.create_task_plan, "create_task_plan"),
                tool_from_function(self.add_task, "add_task"),
                tool_from_function(self.update_task_status, "update_task_status"),
                tool_from_function(self.get_task_plan, "get_task_plan"),
            ],
            timeout_seconds=10,
        )
        self._specs = tuple(_annotated(s) for s in self._box.specs())

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        if not self._on_disk or call.name == "get_task_plan":
            return ()
        if ctx.workspace is None:
            raise ValueError("task_planning_filesystem_mode needs a workspace (`cwd:`)")
        return (Write(ctx.workspace / PLAN_FILE),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        self._workspace = ctx.workspace
        return await self._box.call(call, ctx)

    # The tools (their signatures and docstrings are what the model sees). Coroutines, so
    # they run on the event loop, one at a time: no lock needed around the plan.

    async def create_task_plan(self, tasks: list[TaskSpec]) -> str:
        """Create your task plan (replacing any earlier one): a list of tasks, each with a
        description and optionally an id, verification criteria, depends_on (ids of
        earlier tasks) and priority (low, medium, high)."""
        self._plan.create(tasks)
        return self._saved()

    async def add_task(
        self,
        description: str,
        id: str | None = None,
        verification: str | None = None,
        depends_on: list[str] | None = None,
        priority: Literal["low", "medium", "high"] = "medium",
    ) -> str:
        """Add one task at the end of your plan."""
        spec = TaskSpec(
            description=description,
            id=id,
            verification=verification,
            depends_on=depends_on or [],
            priority=priority,
        )
        self._plan.add(spec)
        return self._saved()

    async def update_task_status(
        self, task_id: str, status: Status, completion_notes: str = ""
    ) -> str:
        """Set a task's status (pending, in_progress, completed, blocked), with notes."""
        self._plan.update(task_id, status, completion_notes)
        return self._saved()

    async def get_task_plan(self) -> str:
        """Your task plan: every task with its status, and counts per status."""
        return self._text()

    def _text(self) -> str:
        return json.dumps(self._plan.summary(), indent=1)

    def _saved(self) -> str:
        text = self._text()
        if self._on_disk:
            if self._workspace is None:
                raise ValueError("task_planning_filesystem_mode needs a workspace (`cwd:`)")
            _write_atomically(self._workspace, text)
        return text


def _annotated(spec: ToolSpec) -> ToolSpec:
    read_only = spec.name == "get_task_plan"
    return ToolSpec(
        spec.name,
        spec.description,
        spec.parameters,
        ToolAnnotations(read_only=read_only, destructive=False, open_world=False),
    )


def _write_atomically(workspace: Path, text: str) -> None:
    """By the workspace's descriptor: a link the agent planted on the way is refused."""
    root = safe_open.open_root(Path(os.path.realpath(workspace)))
    try:
        safe_open.write_atomic(root, PLAN_FILE.as_posix(), text.encode("utf-8"))
    finally:
        os.close(root)


def planning_toolboxes(config: MassgenConfig) -> dict[str, Toolbox]:
    """Agent id -> its planning tools, when the config enables task planning."""
    coordination = config.orchestrator.coordination
    if not coordination.enable_agent_task_planning:
        return {}
    limit, on_disk = coordination.max_tasks_per_plan, coordination.task_planning_filesystem_mode
    return {agent.id: PlanToolbox(limit, on_disk) for agent in config.agents}
