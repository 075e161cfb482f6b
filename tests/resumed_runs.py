"""A run interrupted while a provider call is held, and the run that resumes it: the
helpers of the tests that check what a resumed run keeps (personas, paraphrases, ...)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from massgen.api import LoadedConfig, RunResult, TeamRun
from massgen.runs.resuming import prepare_with


async def interrupted(loaded: LoadedConfig, question: str, reached: threading.Event) -> TeamRun:
    """A run cancelled as soon as its provider holds a call (`reached` set)."""
    first = TeamRun(loaded, question)
    task = asyncio.create_task(first.execute())
    assert await asyncio.to_thread(reached.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return first


async def resume(
    first: TeamRun, loaded: LoadedConfig, question: str, events: list[Any]
) -> tuple[TeamRun, RunResult]:
    """The run that resumes `first` from its log, run to its end, its events in `events`."""
    target = prepare_with(first.log_dir, loaded)
    second = TeamRun(
        target.loaded,
        question,
        log_dir=target.log_dir,
        resumed=target.resumed,
        sinks=[events.append],
    )
    return second, await second.execute()
