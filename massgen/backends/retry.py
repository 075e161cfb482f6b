"""Bounded retries for backend streams.

A stream is retried only while nothing has reached the caller: once text has been
yielded, trying again would repeat it, so a later failure is raised as is.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TypeVar

from massgen.core.errors import BackendError, RateLimited

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
OnRetry = Callable[[int, BackendError, float], None]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    # A provider's Retry-After is honoured up to this many seconds.
    max_retry_after: float = 60.0

    def delay(self, retry: int, error: BackendError, rand: Callable[[], float]) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        if isinstance(error, RateLimited) and error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.max_retry_after)
        # Full jitter: spreads out agents that were throttled together.
        return rand() * min(self.max_delay, self.base_delay * 2**retry)


async def retrying(
    attempt: Callable[[], AsyncGenerator[T, None]],
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
    rand: Callable[[], float] = random.random,
    on_retry: OnRetry | None = None,
) -> AsyncIterator[T]:
    """Yield from `attempt()`, starting it again after a retryable `BackendError` raised
    before its first item, at most `policy.max_retries` times."""
    for retry in range(policy.max_retries + 1):
        started = False
        try:
            async with aclosing(attempt()) as items:
                async for item in items:
                    started = True
                    yield item
            return
        except BackendError as error:
            if started or not error.retryable or retry == policy.max_retries:
                raise
            wait = policy.delay(retry, error, rand)
            if on_retry is not None:
                on_retry(retry + 1, error, wait)
        await sleep(wait)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)
