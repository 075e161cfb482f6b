"""A circuit breaker per server: after `threshold` failures in a row, calls are answered
with an error at once for `cooldown` seconds; then one call may try again."""

from __future__ import annotations

import time
from collections.abc import Callable


class Breaker:
    def __init__(
        self,
        threshold: int = 3,
        cooldown: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold, self.cooldown, self._clock = threshold, cooldown, clock
        self.failures = 0
        self._opened_at: float | None = None

    def open_for(self) -> float | None:
        """Seconds left while open; None when a call may go through (closed or half-open)."""
        if self._opened_at is None:
            return None
        left = self._opened_at + self.cooldown - self._clock()
        return left if left > 0 else None

    def succeeded(self) -> None:
        self.failures, self._opened_at = 0, None

    def failed(self) -> None:
        self.failures += 1
        if self.failures >= self.threshold:
            self._opened_at = self._clock()
