"""Runaway guards: a model that writes on and on without acting, repeats one tool call
with the same arguments, or loops on the same lines is stopped, told why once, and failed
for the turn if it does it again.

Each guard has a default and a setting under `orchestrator:` (`max_reply_chars`,
`max_identical_tool_calls`, `max_repeated_lines`). The checks are cheap: the reply's
length on every chunk, its lines only each time it has grown by `_SCAN_EVERY` characters.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from massgen.core.types import ToolCall

_SCAN_EVERY = 2048  # characters of new text between two scans for repeated lines
_MIN_LINE = 16  # shorter lines (list markers, separators) repeat innocently


@dataclass(frozen=True, slots=True)
class Guards:
    max_reply_chars: int = 60_000
    max_identical_tool_calls: int = 3
    max_repeated_lines: int = 10


def corrective(reason: str) -> str:
    return (
        f"You were stopped: {reason}. Do not repeat it. Finish now with the workflow action: "
        "call `new_answer` with your answer, or `vote`."
    )


@dataclass(slots=True)
class ReplyWatch:
    """Watches one reply as it streams; `stop` says why it must end, once it must."""

    guards: Guards
    chars: int = 0
    _scanned: int = 0

    def stop(self, text: str, reasoning_chars: int, acted: bool) -> str | None:
        self.chars = len(text) + reasoning_chars
        if not acted and self.chars > self.guards.max_reply_chars:
            return f"{self.chars:,} characters written without an action (limit {self.guards.max_reply_chars:,})"
        if len(text) - self._scanned >= _SCAN_EVERY:
            self._scanned = len(text)
            return repeated_line(text, self.guards.max_repeated_lines)
        return None


def repeated_line(text: str, limit: int) -> str | None:
    """Why `text` is a loop (one line, ignoring case and spacing, written `limit` times or
    more), or None."""
    lines = (" ".join(line.split()).lower() for line in text.splitlines())
    counts = Counter(line for line in lines if len(line) >= _MIN_LINE)
    if not counts:
        return None
    line, times = counts.most_common(1)[0]
    if times < limit:
        return None
    shown = line if len(line) <= 60 else f"{line[:57]}..."
    return f"the same line written {times} times (“{shown}”)"


@dataclass(slots=True)
class CallWatch:
    """Counts one run's tool calls by name and arguments (key order and spacing aside)."""

    limit: int
    seen: Counter[tuple[str, str]] = field(default_factory=Counter)

    def repeats(self, call: ToolCall) -> str | None:
        """Count `call`; why it must not run (the `limit`-th identical one), or None."""
        key = (call.name, _canonical(call.arguments))
        self.seen[key] += 1
        if self.seen[key] < self.limit:
            return None
        return f"`{call.name}` called {self.seen[key]} times with the same arguments"


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return arguments.strip()
