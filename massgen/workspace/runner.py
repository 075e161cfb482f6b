"""Run one command to completion, bounded: `await run_command(argv, cwd, limits, env)`.

- The command is its own process group (`start_new_session=True`). When the call ends,
  however it ends (exit, timeout, cancellation), the whole group gets SIGTERM, a short
  grace, then SIGKILL, so nothing the command started outlives the call: a backgrounded
  `sleep` dies with its shell. A process that leaves the group on purpose (`setsid`) is out
  of reach here; the command sandbox (`permissions/sandbox.py`), whose argv this runner
  starts, ends those too (bubblewrap's pid namespace, the Landlock launcher's subreaper).
- stdout and stderr share one pipe, so the output is interleaved as a terminal shows it.
- Output is read in chunks into a bounded head and tail; memory stays within the bound
  whatever the command prints, and the output says how much was cut from the middle.
- The child's environment is the caller's; `command_environment` builds one from an
  allowlist, so no secret reaches a command whatever its name.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

KILL_GRACE_SECONDS = 2.0
_CHUNK = 64 * 1024
# How long to wait for the pipe to close once the group is dead (a process that escaped
# the group can hold it open forever).
_DRAIN_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one command: its wall-clock timeout and how much output it returns."""

    timeout_seconds: float
    max_output_bytes: int = 64 * 1024
    kill_grace_seconds: float = KILL_GRACE_SECONDS

    def lowered(self, timeout_seconds: float | None) -> Limits:
        """These limits with the timeout lowered to `timeout_seconds`; a request above the
        ceiling gets the ceiling, never more."""
        if timeout_seconds is None or timeout_seconds >= self.timeout_seconds:
            return self
        return Limits(max(timeout_seconds, 0.0), self.max_output_bytes, self.kill_grace_seconds)


@dataclass(frozen=True, slots=True)
class Finished:
    """How a command ended. `exit_code` is negative when a signal ended it (-9: SIGKILL)."""

    exit_code: int
    output: str
    duration_s: float
    timed_out: bool
    cut_bytes: int = 0  # bytes of output left out of `output` (its note says so too)


async def run_command(
    argv: Sequence[str],
    cwd: Path,
    limits: Limits,
    env: Mapping[str, str],
    stdin: bytes | None = None,
) -> Finished:
    """Run `argv` in `cwd` until it exits or `limits.timeout_seconds` pass. `stdin`: what
    the command reads on its standard input (default: nothing, /dev/null).

    Raises:
        OSError: the command could not be started (no such program, no such directory).
        asyncio.CancelledError: the caller was cancelled; the process group is killed
            and reaped first.
    """
    started = time.monotonic()
    process = await _start(argv, cwd, env, limits.kill_grace_seconds, stdin is not None)
    capture = _Capture(limits.max_output_bytes)
    assert process.stdout is not None
    reader = asyncio.create_task(capture.read(process.stdout))
    feeder = asyncio.create_task(_feed(process.stdin, stdin)) if stdin is not None else None
    timed_out = False
    try:
        try:
            async with asyncio.timeout(limits.timeout_seconds):
                await process.wait()
        except TimeoutError:
            timed_out = True
    finally:
        await _stop_group(process, limits.kill_grace_seconds)
        await _drain(reader)
        if feeder is not None:
            feeder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await feeder
    assert process.returncode is not None
    return Finished(
        exit_code=process.returncode,
        output=capture.text(),
        duration_s=round(time.monotonic() - started, 3),
        timed_out=timed_out,
        cut_bytes=capture.cut,
    )


async def _start(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], grace: float, piped: bool = False
) -> asyncio.subprocess.Process:
    """The started command. A cancel while asyncio connects its pipes would kill only the
    leader (asyncio's own cleanup) and leave what it had already started running: the
    start is shielded, and a cancelled start stops the whole group before it re-raises.
    The group is a live group (`kill_live_groups`) from the moment it exists: a second
    Ctrl-C during that stop must still reach it."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE if piped else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    )
    starting.add_done_callback(_register)
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            process = await starting
            await _stop_group(process, grace)
        raise


async def _feed(pipe: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write `data` to the command's stdin and close it; a command that stops reading
    (exits, or never reads) ends the writing, not the call."""
    if pipe is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
        pipe.close()


def _register(started: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not started.cancelled() and started.exception() is None:
        _LIVE_GROUPS.add(started.result().pid)


async def _stop_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL to the
    group (whatever is left: stragglers, or processes that ignore SIGTERM), and reap."""
    pgid = process.pid  # start_new_session: the leader's pid is the group's id
    try:
        _signal_group(pgid, signal.SIGTERM)
        if process.returncode is None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace):
                    await process.wait()
    finally:
        # Also when cancelled again during the grace: nothing may survive the call.
        _signal_group(pgid, signal.SIGKILL)
    await process.wait()
    _LIVE_GROUPS.discard(pgid)


# The process groups of commands still running, for a process that must exit at once
# (a second Ctrl-C, `massgen.runs.interrupts`): it has no time to wait for their calls to end.
_LIVE_GROUPS: set[int] = set()


def kill_live_groups() -> None:
    for pgid in tuple(_LIVE_GROUPS):
        _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _drain(reader: asyncio.Task[None]) -> None:
    """Let the reader take what is left in the pipe, briefly; then stop it."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_DRAIN_SECONDS):
            await asyncio.shield(reader)
    if not reader.done():
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


class _Capture:
    """The first and last `limit / 2` bytes of a stream, and how many came between."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    async def read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.add(chunk)

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        self._tail += chunk
        if len(self._tail) > self._tail_limit:
            del self._tail[: len(self._tail) - self._tail_limit]

    @property
    def cut(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if not self.cut:
            return head + tail
        note = (
            f"\n[output cut: {self.total:,} bytes in all; {self.cut:,} bytes from the middle "
            f"left out; the first {len(self._head):,} and last {len(self._tail):,} are shown]\n"
        )
        return head + note + tail


# ---------------------------------------------------------------- the child's environment

# What a command gets from massgen's environment; everything else (keys, tokens, database
# URLs, whatever their names) stays out unless `command_line_env` passes it on purpose.
# The sandbox sets HOME and TMPDIR to the call's private tmp dir.
ALLOWED_NAMES = frozenset({"PATH", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "TZ",
                           "USER", "LOGNAME"})  # fmt: skip
ALLOWED_PREFIXES = ("LC_",)


def command_environment(
    base: Mapping[str, str], passed: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowed variables of `base` (`ALLOWED_NAMES`, `LC_*`), then `passed` on top:
    what the user gave the command explicitly is kept, whatever its name."""
    env = {
        name: value
        for name, value in base.items()
        if name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)
    }
    env.update(passed or {})
    return env
