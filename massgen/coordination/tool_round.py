"""One round of tool calls: the calls a model made in one turn, run through its toolbox.

Calls run concurrently (at most `ToolBounds.max_concurrent` at once) and come back in the
order the model made them. Every call is bounded: a per-call timeout (or the tool's own,
`ToolSpec.timeout_seconds`), a cap on the result's size, and cancellation (a restart or
the run's deadline cancels the round; each call in flight is cancelled and reported).
Whatever a toolbox does, raising included, the model gets a `ToolResult` and the agent goes
on. The toolbox is the only way to a tool.

A `Gate` (the permission engine's `Guarded`) is asked first, outside the call's timeout:
the time a person takes to answer an approval is not the tool's. The call then runs only
through the `Permit` the gate gave. Any exception there is a refusal; nothing runs.

A call may say how it is going (`ToolContext.progress`, set here per call): each line
a `ToolCallProgress` event, bounded by `tools.progress.ProgressGate`, the last one sent
just before the call's `ToolCallFinished`. The model never sees them.

Planning mode: during coordination a tool not marked read-only is held back. The model is
told it runs in the final presentation, and that its plan belongs in its answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from massgen.core import events as ev
from massgen.core.tool_progress import ProgressGate
from massgen.core.toolbox import Gate, Permit, Phase, Toolbox, ToolContext, ToolResult
from massgen.core.types import ToolCall, ToolSpec

Emit = Callable[[ev.AnyEvent], None]


@dataclass(frozen=True, slots=True)
class ToolBounds:
    """The limits every tool call runs under (`orchestrator:` in the config)."""

    timeout_seconds: float = 60.0
    max_result_bytes: int = 64 * 1024
    max_concurrent: int = 10
    planning_mode: bool = False  # hold back tools that are not read-only (coordination only)


HELD = (
    "Not run: planning mode is on. `{name}` may change things outside this conversation, "
    "so it runs only in the final presentation, by the agent whose answer is chosen. Put "
    "your plan in your answer: which tools you would call, with which arguments, and why."
)


async def run_round(
    toolbox: Toolbox,
    calls: Sequence[ToolCall],
    ctx: ToolContext,
    bounds: ToolBounds,
    emit: Emit,
) -> list[ToolResult]:
    """Run `calls` concurrently; one result per call, in the calls' order."""
    specs = {spec.name: spec for spec in toolbox.specs()}
    gate = asyncio.Semaphore(bounds.max_concurrent)

    async def one(call: ToolCall) -> ToolResult:
        async with gate:
            return await _run_one(toolbox, call, specs.get(call.name), ctx, bounds, emit)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(call)) for call in calls]
    return [task.result() for task in tasks]


async def _run_one(
    toolbox: Toolbox,
    call: ToolCall,
    spec: ToolSpec | None,
    ctx: ToolContext,
    bounds: ToolBounds,
    emit: Emit,
) -> ToolResult:
    told = _CallEvents.start(call, ctx, emit)
    ctx = dataclasses.replace(ctx, progress=told.gate)
    if held_back(spec, ctx.phase, bounds):
        return told.finish(ToolResult(call.id, HELD.format(name=call.name)), held=True)
    try:
        result = await _result(toolbox, call, spec, ctx, bounds)
    except asyncio.CancelledError:
        told.finish(ToolResult(call.id, "Error: cancelled (the run moved on).", is_error=True))
        raise
    return told.finish(result)


async def _result(
    toolbox: Toolbox, call: ToolCall, spec: ToolSpec | None, ctx: ToolContext, bounds: ToolBounds
) -> ToolResult:
    """The gate's refusal, or what the tool returned within its timeout, capped in size."""
    verdict = await _authorized(toolbox, call, ctx)
    if isinstance(verdict, ToolResult):
        return dataclasses.replace(verdict, call_id=call.id)
    timeout = bounds.timeout_seconds
    if spec is not None and spec.timeout_seconds is not None:
        timeout = spec.timeout_seconds  # the tool's own bound (subagents)
    result = await _guarded_call(verdict, ctx, timeout)
    return truncated(dataclasses.replace(result, call_id=call.id), bounds.max_result_bytes)


@dataclass(slots=True)
class _CallEvents:
    """What one call tells the run: that it started, its progress lines (through `gate`),
    and how it finished."""

    call: ToolCall
    ctx: ToolContext
    emit: Emit
    gate: ProgressGate
    started: float

    @classmethod
    def start(cls, call: ToolCall, ctx: ToolContext, emit: Emit) -> _CallEvents:
        emit(
            ev.ToolCallStarted(
                agent=ctx.agent,
                call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                phase=ctx.phase,
            )
        )
        return cls(call, ctx, emit, _progress_gate(call, ctx, emit), time.monotonic())

    def finish(self, result: ToolResult, *, held: bool = False) -> ToolResult:
        self.gate.close()  # its last line, then the result that replaces it
        self.emit(
            ev.ToolCallFinished(
                agent=self.ctx.agent,
                call_id=self.call.id,
                name=self.call.name,
                result=result.content,
                ok=not result.is_error,
                duration_s=round(time.monotonic() - self.started, 6),
                held=held,
                phase=self.ctx.phase,
            )
        )
        return result


def _progress_gate(call: ToolCall, ctx: ToolContext, emit: Emit) -> ProgressGate:
    """The call's bounded progress reporter: each line it lets through an event."""

    def send(message: str) -> None:
        emit(
            ev.ToolCallProgress(
                agent=ctx.agent, call_id=call.id, name=call.name, message=message, phase=ctx.phase
            )
        )

    return ProgressGate(send)


def held_back(spec: ToolSpec | None, phase: Phase, bounds: ToolBounds) -> bool:
    """True for a tool planning mode keeps from running now. An unknown name is not held:
    the toolbox answers it with "not available" and nothing runs."""
    if not bounds.planning_mode or phase != "coordination" or spec is None:
        return False
    return spec.annotations.read_only is not True


async def _authorized(toolbox: Toolbox, call: ToolCall, ctx: ToolContext) -> Permit | ToolResult:
    """The permit that runs the call, else the refusal. A toolbox that is not a `Gate`
    runs the call as it is. Untimed here: the approver's own timeout bounds a person's
    answer."""
    if not isinstance(toolbox, Gate):
        return Permit(call, functools.partial(toolbox.call, call))
    try:
        verdict = await toolbox.authorize(call, ctx)
    except Exception as error:  # a failed check is a no, never a yes
        return ToolResult.error(call, f"the permission check failed ({_describe(error)})")
    if isinstance(verdict, Permit | ToolResult):
        return verdict
    return ToolResult.error(call, "the permission check gave no verdict")


async def _guarded_call(permit: Permit, ctx: ToolContext, timeout: float) -> ToolResult:
    """The permitted call's result, or an error result for a timeout or an exception."""
    call = permit.call
    try:
        async with asyncio.timeout(timeout) as scope:
            return await permit.run(ctx)
    except TimeoutError as error:
        if scope.expired():
            return ToolResult.error(call, f"`{call.name}` timed out after {timeout:g}s.")
        return ToolResult.error(call, _describe(error))
    except Exception as error:  # a tool's failure is a result the model reads
        return ToolResult.error(call, _describe(error))


def _describe(error: Exception) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def truncated(result: ToolResult, limit: int) -> ToolResult:
    """`result` cut to `limit` UTF-8 bytes (at a character boundary), with a note that
    says how big it was."""
    data = result.content.encode("utf-8")
    if len(data) <= limit:
        return result
    kept = data[:limit].decode("utf-8", errors="ignore")
    note = (
        f"\n\n[truncated: the result was {len(data):,} bytes; only the first {limit:,} are shown]"
    )
    return dataclasses.replace(result, content=kept + note, truncated=True)
