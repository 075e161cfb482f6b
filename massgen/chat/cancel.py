"""Running one chat turn so that Ctrl-C cancels just that turn, not the chat.

While a turn runs, SIGINT cancels the turn's task instead of raising KeyboardInterrupt in
the loop; the team ends with what it had decided (`TeamRun.outcome`), and the handler is
removed again so that Ctrl-C at the prompt ends the chat as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator
from typing import Any

from massgen.api import RunResult, TeamRun


async def cancellable(run: TeamRun) -> RunResult | None:
    """Execute `run`; on Ctrl-C cancel it and return the partial result (None if nothing
    had started). Raises what the run raises otherwise."""
    task = asyncio.create_task(run.execute())
    with _sigint_cancels(task):
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                current.uncancel()  # asyncio's own Ctrl-C handling cancelled us: same thing
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
    outcome = run.outcome
    return run.result(outcome) if outcome is not None else None


@contextlib.contextmanager
def _sigint_cancels(task: asyncio.Task[Any]) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
        installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
