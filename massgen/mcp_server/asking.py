"""One team run for one tool call, within the server's bounds.

Bounds: at most `max_concurrent` runs at once (a call waits up to `slot_wait_s` for a
slot, then is refused); a run's deadline is `timeout_s` (else the config's orchestrator
timeout); its cost is capped at the smaller of the caller's `max_cost` and the server's.

Headless, as `massgen --automation`: no approver, so the config's permission policy
answers every ask. The files a caller names in `context` become read-only context paths
(`orchestrator.context_paths`), so agents with a workspace read them and nobody writes
them; a team without workspaces gets their text in the question instead.

A client's cancellation cancels the tool call's task: the run is cancelled as Ctrl-C
cancels it (the orchestrator keeps what was decided, the journal is closed), within
`cancel_grace_s`, and the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from massgen.api import RunResult, TeamRun
from massgen.config.schema import ContextPathConfig
from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.core.secrets import secret_path
from massgen.mcp_server import progress
from massgen.mcp_server.teams import load_runnable
from massgen.runs.loading import LoadedConfig
from massgen.serve.teams import SERVED, Teams
from massgen.workspace.context import ContextPaths
from massgen.workspace.team import workspace_names

MAX_QUESTION_CHARS = 200_000
MAX_CONTEXT_PATHS = 32
MAX_INLINE_BYTES = 256 * 1024  # all files together, for a team without workspaces

Report = Callable[[str], Awaitable[None]]


class Refused(Exception):
    """A call the server will not run: the message says why and what to do instead."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_concurrent: int = 2
    timeout_s: float | None = None  # None: the config's orchestrator timeout
    max_cost: float = 2.0  # USD per run, whatever the caller asks for
    slot_wait_s: float = 60.0
    cancel_grace_s: float = 20.0


class Asker:
    """Runs teams for tool calls, `limits.max_concurrent` at a time."""

    def __init__(self, teams: Teams, limits: Limits) -> None:
        self.teams, self.limits = teams, limits
        self._slots = asyncio.Semaphore(limits.max_concurrent)

    def prepare(
        self,
        question: str,
        team: str | None,
        context: Sequence[str] = (),
        max_cost: float | None = None,
    ) -> tuple[LoadedConfig, str]:
        """The team's config with this call's bounds and context, and the question.

        Raises:
            Refused: the question, cost or context is not acceptable.
            UnknownTeam, ConfigError: the team is not listed, or cannot run here.
        """
        if not question.strip():
            raise Refused("the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise Refused(f"the question is over {MAX_QUESTION_CHARS:,} characters")
        if max_cost is not None and max_cost <= 0:
            raise Refused(f"max_cost must be more than 0, got {max_cost}")
        loaded = load_runnable(self.teams, team or SERVED)
        paths = _context_paths(context)
        cost = min(x for x in (max_cost, self.limits.max_cost, _config_cost(loaded)) if x)
        loaded = _bounded(loaded, cost, paths)
        if paths and not workspace_names(loaded.config.agents):
            question += _inlined(paths)
        return loaded, question

    async def ask(self, loaded: LoadedConfig, question: str, report: Report) -> RunResult:
        """Run the team; each progress line goes to `report` as it happens."""
        try:
            with anyio.fail_after(self.limits.slot_wait_s):
                await self._slots.acquire()
        except TimeoutError:
            raise Refused(
                f"all {self.limits.max_concurrent} run slots stayed busy for "
                f"{self.limits.slot_wait_s:g} s; try again later"
            ) from None
        try:
            return await self._run(loaded, question, report)
        finally:
            self._slots.release()

    async def _run(self, loaded: LoadedConfig, question: str, report: Report) -> RunResult:
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        turn = TeamRun(
            loaded,
            question,
            sinks=[_progress_sink(lines)],
            deadline_seconds=self.limits.timeout_s,
            cli_args=["mcp", "ask_team"],
        )
        # A task of its own, outside the SDK's cancel scope: cancelling it once lets the
        # orchestrator wind down (keep the best answer, close the journal) undisturbed.
        task = asyncio.create_task(turn.execute(), name="massgen-mcp-run")
        task.add_done_callback(lambda _: lines.put_nowait(None))
        try:
            while (line := await lines.get()) is not None:
                with contextlib.suppress(Exception):  # a client gone away is not our failure
                    await report(line)
            return await task
        except BaseException:
            await self._stop(task)
            raise

    async def _stop(self, task: asyncio.Task[RunResult]) -> None:
        if task.done():
            return
        task.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.limits.cancel_grace_s):
            await asyncio.wait({task})


def _progress_sink(lines: asyncio.Queue[str | None]) -> Callable[[ev.AnyEvent], None]:
    sent = 0

    def sink(event: ev.AnyEvent) -> None:
        nonlocal sent
        line = progress.describe(event)
        if line is None or sent > progress.MAX_MESSAGES:
            return
        sent += 1
        lines.put_nowait(line if sent <= progress.MAX_MESSAGES else "(more progress not shown)")

    return sink


def _config_cost(loaded: LoadedConfig) -> float | None:
    return loaded.config.orchestrator.max_cost


def _bounded(loaded: LoadedConfig, cost: float, paths: Sequence[Path]) -> LoadedConfig:
    orchestrator = loaded.config.orchestrator
    added = tuple(ContextPathConfig(path=str(p), permission="read") for p in paths)
    update = {"max_cost": cost, "context_paths": (*orchestrator.context_paths, *added)}
    config = loaded.config.model_copy(
        update={"orchestrator": orchestrator.model_copy(update=update)}
    )
    return dataclasses.replace(loaded, config=config)


def _context_paths(context: Sequence[str]) -> list[Path]:
    """The named files and directories, resolved from the server's directory.

    Raises:
        Refused: one does not exist, holds a secret or HOME, or there are too many.
    """
    if len(context) > MAX_CONTEXT_PATHS:
        raise Refused(f"at most {MAX_CONTEXT_PATHS} context paths, got {len(context)}")
    home = Path(os.path.realpath(os.path.expanduser("~")))
    paths = []
    for given in context:
        path = Path(os.path.realpath(Path(given).expanduser()))
        if not path.exists():
            raise Refused(f"context path {given!r} does not exist (relative to {Path.cwd()})")
        secret = secret_path(path, home)
        if secret is not None:
            raise Refused(f"context path {given!r} is not shared with the team: {secret}")
        paths.append(path)
    try:
        ContextPaths.of([ContextPathConfig(path=str(p)) for p in paths])
    except ConfigError as error:
        raise Refused(error.message) from None
    return paths


def _inlined(paths: Sequence[Path]) -> str:
    """The text of the context files, for a team whose agents have no file tools.

    Raises:
        Refused: a directory (it needs agents with workspaces), a binary file, or too much.
    """
    parts, total = [], 0
    for path in paths:
        if path.is_dir():
            raise Refused(
                f"{path} is a directory, and this team's agents have no workspace to read "
                "it from: name the files, or use a team whose agents have `cwd`"
            )
        data = path.read_bytes()
        total += len(data)
        if total > MAX_INLINE_BYTES:
            raise Refused(f"the context files are over {MAX_INLINE_BYTES // 1024} KiB together")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"{path} is not a UTF-8 text file") from None
        parts.append(f"\n\n--- {path} ---\n{text}")
    return "\n\nContext files (read-only):" + "".join(parts)
