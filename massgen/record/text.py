"""Small text helpers shared by the status file and the coordination table."""

from __future__ import annotations

from datetime import datetime


def preview(text: str | None, limit: int = 200) -> str | None:
    """One line of at most `limit` characters, whitespace collapsed, `…` when cut."""
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def iso(at: float) -> str:
    """Local time with offset, to the millisecond: readable and unambiguous."""
    return datetime.fromtimestamp(at).astimezone().isoformat(timespec="milliseconds")


def version_of(label: str, fallback: int) -> int:
    """The answer version in a label: 3 for `agent2.3`; `fallback` if it has none."""
    _, _, tail = label.rpartition(".")
    return int(tail) if tail.isdigit() else fallback


def seconds_text(seconds: float) -> str:
    """A tool call's duration: 0.04s, 3.2s, 75s."""
    if seconds < 1:
        return f"{seconds:.2f}s"
    return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"


def tool_outcome(ok: bool, held: bool) -> tuple[str, str]:
    """(mark, word) for a finished tool call: ✓ ok, ✗ error, ⏸ held (planning mode)."""
    if held:
        return "⏸", "held"
    return ("✓", "ok") if ok else ("✗", "error")
