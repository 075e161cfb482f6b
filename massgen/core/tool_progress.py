"""Bounds on what one running tool call may say about itself (`ToolContext.progress`).

A tool may report as often as it likes; the person watching gets at most `MAX_EVENTS`
lines per call, at most one per `MIN_INTERVAL_S`, each at most `MAX_CHARS` characters.
A line that arrives too soon is not lost at once: it waits as the latest, and `close`
(just before the call's result) sends it if the cap allows, so the last word a tool said
before finishing is the one shown. After `close` nothing more is sent (a thread the call
abandoned may still be reporting).
"""

from __future__ import annotations

import time
from collections.abc import Callable

MAX_EVENTS = 50
MIN_INTERVAL_S = 0.2
MAX_CHARS = 300


class ProgressGate:
    """One call's progress lines, bounded, passed to `send`."""

    def __init__(
        self,
        send: Callable[[str], None],
        *,
        max_events: int | None = None,
        min_interval_s: float | None = None,
        max_chars: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # None: the module's bound, read now (so a test or bench may set it).
        self._send = send
        self._max_events = MAX_EVENTS if max_events is None else max_events
        self._interval = MIN_INTERVAL_S if min_interval_s is None else min_interval_s
        self._max_chars = MAX_CHARS if max_chars is None else max_chars
        self._clock = clock
        self._sent = 0
        self._last_at: float | None = None
        self._pending: str | None = None
        self._closed = False
        self.dropped = 0  # lines never shown (superseded, or past the cap)

    def __call__(self, message: str) -> None:
        if self._closed or self._sent >= self._max_events:
            self.dropped += 1
            return
        text = clean(message, self._max_chars)
        if not text:
            return
        now = self._clock()
        if self._last_at is not None and now - self._last_at < self._interval:
            if self._pending is not None:
                self.dropped += 1
            self._pending = text  # the latest waits; an older one waiting is dropped
            return
        if self._pending is not None:
            self.dropped += 1  # superseded by this newer line
        self._pending = None
        self._emit(text, now)

    def close(self) -> None:
        """Send the line still waiting, if any (the call is about to finish); then stop."""
        if self._closed:
            return
        self._closed = True
        if self._pending is not None and self._sent < self._max_events:
            self._emit(self._pending, self._clock())
        self._pending = None

    def _emit(self, text: str, now: float) -> None:
        self._sent += 1
        self._last_at = now
        self._send(text)


def clean(message: object, limit: int = MAX_CHARS) -> str:
    """One line of at most `limit` characters: whitespace runs (newlines included) become
    one space, control characters go (they would move a terminal's cursor)."""
    text = " ".join(str(message).split())
    text = "".join(c for c in text if c.isprintable())
    return text if len(text) <= limit else text[: limit - 1] + "…"
