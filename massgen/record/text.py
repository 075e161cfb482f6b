"""Small text helpers shared by the status file and the coordination table."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from massgen.core import events as ev
from massgen.core.types import HostedActivity


def preview(text: str | None, limit: int = 200) -> str | None:
    """One line of at most `limit` characters, whitespace collapsed, `…` when cut."""
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def check_line(event: ev.AnswerChecked, limit: int = 160) -> str:
    """ "✓ check of agent1.2: passed", "✗ check of the final answer: failed (exit 1) ·
    <the last line of its output>"."""
    mark = {"passed": "✓", "failed": "✗"}.get(event.verdict, "?")
    what = "the final answer" if event.phase == "presentation" else event.label
    said = f"{event.verdict} ({event.note})" if event.note else event.verdict
    lines = [line for line in event.excerpt.splitlines() if line.strip()]
    tail = f" · {lines[-1]}" if lines and event.verdict != "passed" else ""
    return preview(f"{mark} check of {what}: {said}{tail}", limit) or ""


def checks_text(
    checks: Mapping[str, ev.AnswerChecked], final: ev.AnswerChecked | None = None
) -> str:
    """ "checks: agent1.1 passed, agent2.1 failed (exit 1); final answer passed"."""
    said = ", ".join(f"{label} {_verdict(check)}" for label, check in checks.items())
    if final is not None:
        said += f"; final answer {_verdict(final)}"
    return f"checks: {said}"


def _verdict(check: ev.AnswerChecked) -> str:
    return f"{check.verdict} ({preview(check.note, 60)})" if check.note else check.verdict


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


# A view lists at most this many of one search's sources; the log keeps them all.
SHOWN_SOURCES = 5
_HOSTED_TITLES = {"web_search": "web search", "code_execution": "code", "x_search": "X search"}
_HOSTED_TITLES["file_search"] = "file search"


def hosted_lines(used: HostedActivity) -> list[str]:
    """A provider-hosted tool's use as a view shows it: the search and its query, then a
    line per source (at most `SHOWN_SOURCES`); or the code and what it printed."""
    tool, sources = used.tool, used.sources
    mark = "⌕" if tool != "code_execution" else "▶"
    title = _HOSTED_TITLES.get(tool, tool)
    if tool == "code_execution":
        head = f"{mark} {title} (hosted): {preview(used.code, 80)}"
        tail = f"  {'→' if used.ok else '✗'} {preview(used.output, 100) or '(no output)'}"
        return [head, tail]
    found = f" · {len(sources)} source{'s' if len(sources) != 1 else ''}"
    lines = [f"{mark} {title} (hosted): {preview(used.query, 80) or '…'}{found}"]
    for n, source in enumerate(sources[:SHOWN_SOURCES], 1):
        name = f"{preview(source.title, 60)} " if source.title else ""
        lines.append(f"  [{n}] {name}<{source.url}>")
    if len(sources) > SHOWN_SOURCES:
        lines.append(f"  … {len(sources) - SHOWN_SOURCES} more")
    return lines


def subagent_line(event: ev.SubagentStarted | ev.SubagentFinished, limit: int = 80) -> str:
    """One line for a child run of `spawn_subagents`, as every view shows it."""
    if isinstance(event, ev.SubagentStarted):
        return f"⇢ subagent {event.subagent}: {preview(event.task, limit)}"
    mark = "✓" if event.outcome == "completed" else "✗"
    took = seconds_text(event.duration_s)
    said = preview(event.answer or event.reason, limit)
    return f"{mark} subagent {event.subagent} {event.outcome} {took}: {said}"


def files_text(files: tuple[str, ...]) -> str:
    """ "files: 2 added, 1 changed (a.py, b.py, c.py)" for an answer's workspace changes;
    "" when it changed nothing."""
    marks = [line[:1] for line in files if line[1:2] == " "]
    counts = [
        f"{marks.count(mark)} {word}"
        for mark, word in (("+", "added"), ("~", "changed"), ("-", "removed"))
        if mark in marks
    ]
    if not counts:
        return ""
    names = preview(", ".join(line[2:] for line in files), 80)
    return f"files: {', '.join(counts)} ({names})"
