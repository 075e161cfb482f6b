"""A toolbox must say what a call would do (`Toolbox.effects`): one that says nothing is
refused by the engine's guard, whatever the rules allow. Nothing guesses on its behalf."""

from __future__ import annotations

from perm_helpers import engine

from massgen.core.toolbox import Toolboxes, ToolContext, ToolResult
from massgen.core.types import ToolCall, ToolSpec
from massgen.permissions.guarded import Guarded
from massgen.permissions.policy import PolicyApprover
from massgen.permissions.risk import Zones

CTX = ToolContext(agent="a")


class Silent:
    """Runs its one tool, and cannot say what the tool does."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def specs(self) -> tuple[ToolSpec, ...]:
        return (ToolSpec("mystery", "", {"type": "object", "properties": {}}),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        self.ran.append(call.id)
        return ToolResult(call.id, "done")


async def test_a_toolbox_that_declares_no_effects_is_refused_even_when_everything_is_allowed(
    tmp_path,
):
    box = Silent()
    allow_all = engine(tmp_path, allow=["*"], approver=PolicyApprover("allow-all"))
    guarded = Guarded(Toolboxes([box]), allow_all, lambda _: Zones())
    result = await guarded.call(ToolCall("c1", "mystery", "{}"), CTX)
    assert result.is_error and "refused" in result.content
    assert box.ran == []
