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
