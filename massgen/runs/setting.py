"""What equipping a run, and starting its children, read from the run: one frozen record
that `TeamRun` makes once its log directory and workspaces exist (`TeamRun.setting`).

Equipping (`equipment.py`) returns what it made (`Equipment`) instead of setting it on the
run; a child run (`subagents/`) is started through `start_child`, which the run passes
in, so nothing here imports `TeamRun`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from massgen.core import events as ev
from massgen.core.status import Status
from massgen.core.toolbox import Toolbox
from massgen.core.usage import Spend, UsageLedger
from massgen.runs.loading import LoadedConfig
from massgen.workspace.team import Workspaces

if TYPE_CHECKING:
    from massgen.permissions.approval import Approver

Sink = Callable[[ev.AnyEvent], None]


class ChildResult(Protocol):
    """What a child's result tells the agent that spawned it (`RunResult` is one)."""

    @property
    def answer(self) -> str: ...
    @property
    def status(self) -> Status: ...
    @property
    def reason(self) -> str: ...
    @property
    def ok(self) -> bool: ...


class ChildRun(Protocol):
    """A started child: run it, and read what it spent (also when it was cut short)."""

    @property
    def ledger(self) -> UsageLedger: ...

    async def execute(self) -> ChildResult: ...


class StartChild(Protocol):
    """Makes a child run (`TeamRun` is one): the run passes it in."""

    def __call__(
        self,
        loaded: LoadedConfig,
        question: str,
        *,
        logs: bool,
        log_dir: Path | None,
        deadline_seconds: float,
        approver: Approver | None,
        session_grants: set[str] | None,
        workspaces: Workspaces | None,
    ) -> ChildRun: ...


@dataclass(frozen=True, slots=True)
class Setting:
    """`toolboxes`: tools the caller opened for longer than the run (a chat session);
    None: equipping opens them. `emit`: the run's sinks (events before `RunStarted` are
    held). `counted`: through the orchestrator once it exists, so its ledger counts usage.
    `tool_failed`: hears a tool server that did not start. `spent`: what the run has
    spent so far. `resumed`: the run continues an interrupted one."""

    loaded: LoadedConfig
    log_dir: Path | None
    workspaces: Workspaces | None
    previous_workspace: Path | None
    toolboxes: Mapping[str, Toolbox] | None
    approver: Approver | None
    session_grants: set[str] | None
    resumed: bool
    emit: Sink
    counted: Sink
    tool_failed: Callable[[ev.ToolSourceFailed | ev.AgentWarning], None]
    spent: Callable[[], Spend]
    start_child: StartChild
