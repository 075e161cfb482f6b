"""The `spawn_subagents` tool (`orchestrator.coordination.enable_subagents`, the
predecessor's key and tool name): an agent hands independent tasks to child runs and gets
their answers back in the tool result.

    spawn_subagents(tasks=[{task, context?, subagent_id?, subagent_type?}, ...], background?)

With `background: true` (on unless `coordination.background_subagents.enabled` is false)
the call returns at once with the children's ids, and `list_subagents`, `wait_subagents`
and `cancel_subagent` reach them later (`jobs.py`, which owns their
bounds: children alive per agent and per run, and the same deadline from the spawn).

What runs a child is not this module's business: the toolbox is given a `Spawn` (the run
that owns it, `children.py`, runs each child as a team run of its own). This
module owns the tool's contract and its bounds:

    tasks per call      at most MAX_TASKS (the predecessor allowed `subagent_max_concurrent`)
    at once             `subagent_max_concurrent` children of one agent, over all its calls
    deadline            `subagent_default_timeout` from the call's start, for every child,
                        waiting for a free slot included; a child past it is cancelled and
                        reported `timeout`, the others carry on
    the call's bound    the deadline plus a margin (ToolSpec.timeout_seconds), in place of
                        `tool_timeout_seconds`, so the tool reports its own timeouts
    answers             each cut to MAX_ANSWER_CHARS (the run's result cap still applies)
    no nesting          a child's config has no subagents, so it is offered no such tool

Effects: a child writes in its own directory, `subagents/<id>/` of the agent's
workspace (so its files are part of the agent's answer snapshot), and calls the model
provider, which spends: `External("massgen", "spawn_subagents")`, an ask by default, in
either mode. `list_subagents` and `wait_subagents` only read what this module holds
(`External(..., read_only=True)`); `cancel_subagent` stops a child (`External`, an ask).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from massgen.core.effects import Effect, External, Write
from massgen.core.toolbox import ToolContext, ToolResult
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.runs.subagents.jobs import Job, Jobs

TOOL = "spawn_subagents"
LIST, WAIT, CANCEL = "list_subagents", "wait_subagents", "cancel_subagent"
SERVER = "massgen"
SUBAGENTS_DIR = "subagents"  # under the spawning agent's workspace
MAX_TASKS = 8
MAX_ANSWER_CHARS = 8000
MAX_TEXT = 20_000  # characters of a task or its context
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"
# Seconds the call's bound keeps above the children's deadline, so that a timed-out child
# is reported by this tool rather than the whole call cut off by the round.
MARGIN_SECONDS = 5.0

Status = Literal["completed", "timeout", "error", "cancelled"]


class SubagentTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, max_length=MAX_TEXT, description="What the subagent does")
    context: str = Field(
        default="",
        max_length=MAX_TEXT,
        description="Background it needs: it sees nothing of your conversation but this",
    )
    subagent_id: str | None = Field(
        default=None,
        pattern=ID_PATTERN,
        description="A name for it (letters, digits, - and _); its directory's name",
    )
    subagent_type: str | None = Field(default=None, description="A role for it")


class SpawnArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: list[SubagentTask] = Field(min_length=1, max_length=MAX_TASKS)
    background: bool = Field(
        default=False,
        description="Return at once and let them run while you work; see their status "
        "and answers with list_subagents or wait_subagents",
    )


class ListArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subagent_ids: list[str] | None = Field(
        default=None, max_length=64, description="Which; all of yours when left out"
    )


class WaitArguments(ListArguments):
    timeout_seconds: float = Field(
        default=60, ge=0, le=3600, description="The longest to wait, in seconds"
    )


class CancelArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subagent_id: str = Field(min_length=1, max_length=40)


@dataclass(frozen=True, slots=True)
class ChildTask:
    """One child to run, as the `Spawn` receives it."""

    id: str
    task: str
    context: str
    role: str | None  # the role paragraph of its `subagent_type`
    workspace: Path | None  # its own directory, under the parent's workspace
    deadline_seconds: float  # time left until the call's deadline when it starts


@dataclass(frozen=True, slots=True)
class ChildOutcome:
    """What a finished child run gives back (`Spawn`'s result)."""

    answer: str
    status: Status = "completed"
    reason: str = ""


Spawn = Callable[[ChildTask, ToolContext, str], Awaitable[ChildOutcome]]


@dataclass(frozen=True, slots=True)
class Limits:
    timeout_seconds: float = 300.0
    max_concurrent: int = 3


class SubagentToolbox:
    """One agent's `spawn_subagents`. `spawn(task, ctx, call_id)`
    runs a child; `roles` maps each offered `subagent_type` to its paragraph; `jobs`, the
    run's background children, offers background mode and its tools (None: blocking only)."""

    def __init__(
        self, spawn: Spawn, limits: Limits, roles: Mapping[str, str], jobs: Jobs | None = None
    ) -> None:
        self._spawn = spawn
        self._limits = limits
        self._roles = dict(roles)
        self._jobs = jobs
        self._gate = asyncio.Semaphore(limits.max_concurrent)
        self._named: set[str] = set()  # every id given out in this run (directories stay)
        self._running: set[str] = set()
        spawning = _spec(limits, tuple(self._roles), background=jobs is not None)
        self._specs = (spawning, *(_job_specs(limits) if jobs is not None else ()))

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """Raises ValueError for malformed arguments."""
        if call.name in (LIST, WAIT) and self._jobs is not None:
            _arguments(ListArguments if call.name == LIST else WaitArguments, call)
            return (External(SERVER, call.name, read_only=True),)
        if call.name == CANCEL and self._jobs is not None:
            _arguments(CancelArguments, call)
            return (External(SERVER, CANCEL),)
        if call.name != TOOL:
            return ()
        tasks = self._parsed(call).tasks
        writes: tuple[Effect, ...] = ()
        if ctx.workspace is not None:
            names = [t.subagent_id or "" for t in tasks]
            writes = tuple(Write(ctx.workspace / SUBAGENTS_DIR / n) for n in names if n)
            writes = writes or (Write(ctx.workspace / SUBAGENTS_DIR),)
        return (*writes, External(SERVER, TOOL))

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        try:
            if self._jobs is not None and call.name in (LIST, WAIT, CANCEL):
                return await self._job_call(self._jobs, call, ctx)
            if call.name != TOOL:
                return ToolResult.error(call, f"tool `{call.name}` is not available.")
            arguments = self._parsed(call)
            if arguments.background and self._jobs is not None:  # else `_parsed` refused it
                return self._in_background(self._jobs, arguments.tasks, call, ctx)
            children = self._children(arguments.tasks, ctx)
        except ValueError as error:
            return ToolResult.error(call, str(error))
        deadline = asyncio.get_running_loop().time() + self._limits.timeout_seconds
        async with asyncio.TaskGroup() as group:
            runs = [group.create_task(self._one(c, ctx, call.id, deadline)) for c in children]
        reports = [run.result() for run in runs]
        return ToolResult(call.id, _result_text(reports))

    def _parsed(self, call: ToolCall) -> SpawnArguments:
        arguments = _arguments(SpawnArguments, call)
        if arguments.background and self._jobs is None:
            raise ValueError(
                "background subagents are off here "
                "(`coordination.background_subagents.enabled: false`); spawn without background"
            )
        return arguments

    def _in_background(
        self, jobs: Jobs, tasks: Sequence[SubagentTask], call: ToolCall, ctx: ToolContext
    ) -> ToolResult:
        """Start each child as a task of the run and return their ids at once.

        Raises:
            ValueError: a bound would be passed, or it is the final presentation.
        """
        if ctx.phase != "coordination":
            raise ValueError(
                "background subagents run while the team coordinates; spawn without background"
            )
        jobs.check_room(ctx.agent, len(tasks))
        children = self._children(tasks, ctx)
        deadline = asyncio.get_running_loop().time() + self._limits.timeout_seconds
        started = [
            jobs.start(
                ctx.agent,
                child.id,
                child.task,
                f"{SUBAGENTS_DIR}/{child.id}" if child.workspace is not None else None,
                self._limits.timeout_seconds,
                self._one(child, ctx, call.id, deadline),
            )
            for child in children
        ]
        return ToolResult(call.id, _started_text(started))

    async def _job_call(self, jobs: Jobs, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """`list_subagents`, `wait_subagents`, `cancel_subagent`. Raises ValueError."""
        if call.name == CANCEL:
            job = jobs.of(ctx.agent, [_arguments(CancelArguments, call).subagent_id])[0]
            await jobs.cancel(job)
            return ToolResult(call.id, jobs.listed([job]))
        if call.name == LIST:
            listing = _arguments(ListArguments, call)
            return ToolResult(call.id, jobs.listed(jobs.of(ctx.agent, listing.subagent_ids)))
        waiting = _arguments(WaitArguments, call)
        mine = jobs.of(ctx.agent, waiting.subagent_ids)
        await jobs.wait(mine, min(waiting.timeout_seconds, self._limits.timeout_seconds))
        return ToolResult(call.id, jobs.listed(mine))

    def _children(self, tasks: Sequence[SubagentTask], ctx: ToolContext) -> list[ChildTask]:
        """Names and roles checked; each child's directory chosen (not yet made). A name
        may come again once its child has ended (a restarted agent repeats its call): the
        new child works in the same directory, on what the earlier one left there."""
        ids = [t.subagent_id for t in tasks if t.subagent_id]
        if len(set(ids)) != len(ids):
            raise ValueError("two tasks have the same subagent_id; each needs its own")
        busy = [i for i in ids if i in self._running]
        if busy:
            seen = f" ({LIST} shows it)" if self._jobs is not None else ""
            raise ValueError(
                f"subagent {busy[0]!r} is still running{seen}; use another subagent_id"
            )
        roles = [self._role(task.subagent_type) for task in tasks]
        names = [task.subagent_id or self._fresh_id(ids) for task in tasks]
        self._named.update(names)
        self._running.update(names)
        base = ctx.workspace / SUBAGENTS_DIR if ctx.workspace else None
        return [
            ChildTask(name, task.task, task.context, role, base / name if base else None, 0.0)
            for name, task, role in zip(names, tasks, roles, strict=True)
        ]

    def _role(self, kind: str | None) -> str | None:
        if not kind:
            return None
        role = self._roles.get(kind.lower())
        if role is None:
            known = ", ".join(self._roles) or "none"
            raise ValueError(f"unknown subagent_type {kind!r}; available: {known}")
        return role

    def _fresh_id(self, asked: list[str]) -> str:
        n = 1
        while f"subagent_{n}" in self._named or f"subagent_{n}" in asked:
            n += 1
        self._named.add(f"subagent_{n}")
        return f"subagent_{n}"

    async def _one(
        self, child: ChildTask, ctx: ToolContext, call_id: str, deadline: float
    ) -> dict[str, object]:
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        try:
            async with asyncio.timeout_at(deadline):
                async with self._gate:
                    left = deadline - loop.time()
                    child = _with_deadline(child, left)
                    outcome = await self._spawn(child, ctx, call_id)
        except TimeoutError:
            outcome = ChildOutcome(
                "", "timeout", f"no answer within {self._limits.timeout_seconds:g}s"
            )
        except Exception as error:  # a child's failure is reported; its siblings go on
            outcome = ChildOutcome("", "error", f"{type(error).__name__}: {error}")
        finally:
            self._running.discard(child.id)
        return _report(child, outcome, time.monotonic() - started)


M = TypeVar("M", bound=BaseModel)


def _arguments(model: type[M], call: ToolCall) -> M:
    """`call`'s arguments as `model`. Raises ValueError naming what is wrong."""
    try:
        return model.model_validate_json(call.arguments or "{}")
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
            for e in error.errors()[:5]
        )
        raise ValueError(f"invalid arguments for {call.name}: {problems}") from None


def _started_text(jobs: Sequence[Job]) -> str:
    started = []
    for job in jobs:
        shown: dict[str, object] = {"subagent_id": job.id, "status": "running"}
        if job.workspace is not None:
            shown["workspace"] = job.workspace
        started.append(shown)
    body = {
        "mode": "background",
        "subagents": started,
        "note": "They run while you work. You will be told when each finishes; "
        f"{LIST} shows their status and {WAIT} waits for their answers.",
    }
    return json.dumps(body, indent=1, ensure_ascii=False)


def _with_deadline(child: ChildTask, seconds: float) -> ChildTask:
    return ChildTask(
        child.id, child.task, child.context, child.role, child.workspace, max(seconds, 0.0)
    )


def _report(child: ChildTask, outcome: ChildOutcome, seconds: float) -> dict[str, object]:
    answer = outcome.answer
    if len(answer) > MAX_ANSWER_CHARS:
        answer = answer[:MAX_ANSWER_CHARS] + f"\n[cut: the answer was {len(answer):,} characters]"
    report: dict[str, object] = {
        "subagent_id": child.id,
        "status": outcome.status,
        "answer": answer,
        "execution_time_seconds": round(seconds, 2),
    }
    if outcome.reason:
        report["reason"] = outcome.reason
    if child.workspace is not None:
        report["workspace"] = f"{SUBAGENTS_DIR}/{child.id}"
    return report


def _result_text(reports: list[dict[str, object]]) -> str:
    counts = {s: sum(r["status"] == s for r in reports) for s in ("completed", "timeout", "error")}
    summary = {"total": len(reports), **counts}
    return json.dumps({"results": reports, "summary": summary}, indent=1, ensure_ascii=False)


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The task schema written in place of its `$ref`: a JSON-action grammar embeds tool
    schemas in a larger one, where a reference to the root's `$defs` would not resolve."""
    defs = schema.pop("$defs", {})
    items = schema["properties"]["tasks"]["items"]
    name = items.pop("$ref").rsplit("/", 1)[-1]
    items.update(defs[name])
    schema.pop("title", None)
    items.pop("title", None)
    return schema


def _spec(limits: Limits, roles: tuple[str, ...], *, background: bool) -> ToolSpec:
    schema = _inlined(SpawnArguments.model_json_schema())
    if not background:
        del schema["properties"]["background"]
    fields = schema["properties"]["tasks"]["items"]["properties"]
    if roles:
        kind = fields["subagent_type"]
        kind.pop("anyOf", None)
        kind.pop("default", None)
        kind.update({"type": "string", "enum": list(roles)})
    else:
        del fields["subagent_type"]  # no roles to give
    description = (
        f"Run up to {MAX_TASKS} independent tasks in parallel, each by a subagent that "
        "starts fresh: it sees only its task and context, never this conversation, and "
        f"cannot spawn subagents itself. At most {limits.max_concurrent} run at once; each "
        f"must answer within {limits.timeout_seconds:g}s or is reported as timed out. "
        "Returns each subagent's answer and status. Tasks run at the same time, so none "
        "may depend on another's result."
    )
    if roles:
        description += f" subagent_type gives one a role: {', '.join(roles)}."
    if background:
        description += (
            " With background: true it returns at once with their ids; keep working, and "
            f"read their answers with {LIST} or {WAIT} (you are also told when each ends)."
        )
    return ToolSpec(
        TOOL,
        description,
        schema,
        ToolAnnotations(read_only=False, destructive=False, open_world=True),
        timeout_seconds=limits.timeout_seconds + MARGIN_SECONDS,
    )


def _job_specs(limits: Limits) -> tuple[ToolSpec, ...]:
    reading = ToolAnnotations(read_only=True, destructive=False, open_world=False)
    listing = _plain(ListArguments.model_json_schema())
    waiting = _plain(WaitArguments.model_json_schema())
    cancelling = _plain(CancelArguments.model_json_schema())
    return (
        ToolSpec(
            LIST,
            "Your background subagents (spawn_subagents with background: true): each one's "
            "status (running, completed, timeout, error, cancelled), elapsed and remaining "
            "seconds, its workspace, and its answer once it has ended.",
            listing,
            reading,
        ),
        ToolSpec(
            WAIT,
            "Wait until your background subagents (the ones named, else all) have ended or "
            f"timeout_seconds have passed (at most {limits.timeout_seconds:g}), then report "
            f"as {LIST} does. Do other work first; wait when nothing else is left.",
            waiting,
            reading,
            timeout_seconds=limits.timeout_seconds + MARGIN_SECONDS,
        ),
        ToolSpec(
            CANCEL,
            "Stop one of your background subagents that is going nowhere; its files stay.",
            cancelling,
            ToolAnnotations(read_only=False, destructive=False, open_world=False),
        ),
    )


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    """A flat arguments schema, without pydantic's `title`s and `anyOf` null branches
    (some providers reject them)."""
    schema.pop("title", None)
    for field in schema.get("properties", {}).values():
        field.pop("title", None)
        if field.get("default", "") is None:
            del field["default"]
        options = field.pop("anyOf", None)
        if options:
            field.update(next(o for o in options if o.get("type") != "null"))
    return schema
