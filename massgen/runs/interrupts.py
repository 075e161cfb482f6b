"""Ctrl-C and SIGTERM for a team run: the first ends it gracefully, a second at once.

The first signal cancels the run: the orchestrator ends it with the best answer so far
(status "interrupted"), every `async with` closes (MCP servers, commands, backends), and
`run_interruptible` raises `KeyboardInterrupt` once that is done. A second signal, at any
later moment, does not wait for any of it: the children massgen knows of are killed and
the process exits with code 4 at once. The journal needs no cleanup for that: every
decision in it was fsynced when it was made.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from massgen.core.status import ExitCode

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)

# What the second signal prints before it exits: the CLI sets it to the resume hint.
farewell = ""
# Called by `exit_now` before anything else, newest first: a full-screen view puts the
# terminal back here (`os._exit` skips every `finally`).
before_exit: list[Callable[[], None]] = []


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` where SIGINT or SIGTERM cancels `main` once.

    Raises:
        KeyboardInterrupt: a signal ended the run (after `main` cleaned up).
    """
    return asyncio.run(_guarded(main))


async def _guarded(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    hits = 0

    def on_signal() -> None:
        nonlocal hits
        hits += 1
        if hits > 1:
            exit_now()
        task.cancel()
        # From now on any signal, in the loop or after it, exits at once.
        for sig in SIGNALS:
            signal.signal(sig, lambda *_: exit_now())

    try:
        for sig in SIGNALS:
            loop.add_signal_handler(sig, on_signal)
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
        return await main  # asyncio's own Ctrl-C handling still applies
    try:
        return await main
    except asyncio.CancelledError:
        if hits:
            raise KeyboardInterrupt from None
        raise
    finally:
        for sig in SIGNALS:
            loop.remove_signal_handler(sig)
        if hits:  # remove_signal_handler put the defaults back
            for sig in SIGNALS:
                signal.signal(sig, lambda *_: exit_now())


def exit_now() -> None:
    """Kill the child processes massgen started and leave with exit code 4, now."""
    for restore in reversed(before_exit):
        with contextlib.suppress(Exception):  # nothing may stop the exit
            restore()
    kill_children()
    with contextlib.suppress(Exception):  # a closed terminal must not stop the exit
        sys.stderr.write(f"\nmassgen: interrupted again; exiting now.{farewell}\n")
        sys.stderr.flush()
    os._exit(ExitCode.INTERRUPTED)


def kill_children() -> None:
    """Commands (their process groups) and local model workers. MCP servers read their
    stdin, which closes when this process exits, and leave."""
    runner = sys.modules.get("massgen.workspace.runner")
    if runner is not None:
        runner.kill_live_groups()
    pool = sys.modules.get("massgen.backends.local_pool")
    if pool is not None:
        pool.kill_workers()
