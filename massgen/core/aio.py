"""Waiting on work that something else may make pointless."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def unless(work: Coroutine[Any, Any, T], stop: Awaitable[Any]) -> asyncio.Task[T]:
    """`work` run to its end, or cancelled (and awaited) as soon as `stop` is done (an
    event set, a client gone): the finished task, whose `cancelled()` says which."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop)
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return task
