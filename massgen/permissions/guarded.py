"""`Guarded(toolbox, engine, zones)`: the checkpoint in front of an agent's toolbox.

Every call is turned into effects by the toolbox that would run it, decided by the
engine, recorded, and only then run. A refused call returns an error the model reads;
nothing of it runs. A toolbox that cannot say what a call does yields `External`
(unknown), never "no effect".

A `Gate`: `authorize` decides, before the tool round starts the call's timeout
(`coordination/tool_round.py`), so a person taking their time to answer is not a tool that
timed out; the `Permit` it returns runs that call once, and nothing else runs it. `call`
(the gate's) decides and runs in one. The approver's own timeout bounds the wait (and the
engine's backstop, `engine.MAX_APPROVAL_SECONDS`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

from massgen.core.effects import Effect, External
from massgen.core.toolbox import Gate, Permit, Toolbox, ToolContext, ToolResult
from massgen.core.types import ToolCall, ToolSpec
from massgen.permissions.engine import Call, Decision, Engine
from massgen.permissions.risk import Zones

REFUSED = "refused by the permission engine: {reason}; do not try to work around it"
RAN = "this permit was used already; each allowed call runs once"


class Guarded(Gate):
    def __init__(
        self, inner: Toolbox, engine: Engine, zones: Callable[[ToolContext], Zones]
    ) -> None:
        self.inner = inner
        self.engine = engine
        self.zones = zones

    def specs(self) -> tuple[ToolSpec, ...]:
        return self.inner.specs()

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        return tuple(self.inner.effects(call, ctx))

    async def authorize(self, call: ToolCall, ctx: ToolContext) -> Permit | ToolResult:
        """Decide `call` now: a permit that runs it once, or the refusal the model reads.
        A name the toolbox does not offer needs no decision: its permit gets the "not
        available" answer, and nothing runs."""
        if all(spec.name != call.name for spec in self.inner.specs()):
            return Permit(call, self._once(call))
        refusal = await self._refusal(call, ctx)
        return refusal if refusal is not None else Permit(call, self._once(call))

    def _once(self, call: ToolCall) -> Callable[[ToolContext], Awaitable[ToolResult]]:
        used = False

        async def run(ctx: ToolContext) -> ToolResult:
            nonlocal used
            if used:
                return ToolResult.error(call, RAN)
            used = True
            return await self.inner.call(call, ctx)

        return run

    async def _refusal(self, call: ToolCall, ctx: ToolContext) -> ToolResult | None:
        decision = await self._decide(call, ctx)
        if decision.allowed:
            return None
        return ToolResult.error(call, REFUSED.format(reason=_unnamed(decision.reason, ctx)))

    async def _decide(self, call: ToolCall, ctx: ToolContext) -> Decision:
        try:
            effects = self.effects(call, ctx)
            zones = self.zones(ctx)
        except Exception as error:  # malformed arguments, or a broken toolbox: no
            effects, zones = (External("<malformed>", call.name),), Zones()
            why = str(error) or type(error).__name__
            return await self.engine.refuse(_call(call, ctx, effects, zones), why)
        return await self.engine.decide(_call(call, ctx, effects, zones))


def _unnamed(reason: str, ctx: ToolContext) -> str:
    """The reason as the model may read it: its workspace's real path (which names the
    agent's directory) is shown as `<workspace>`."""
    if ctx.workspace is None:
        return reason
    for root in sorted(
        {str(ctx.workspace), os.path.realpath(ctx.workspace)}, key=len, reverse=True
    ):
        reason = reason.replace(root, "<workspace>")
    return reason


def _call(call: ToolCall, ctx: ToolContext, effects: tuple[Effect, ...], zones: Zones) -> Call:
    return Call(ctx.agent, call.name, effects, zones, ctx.phase, call.id, call.arguments)
