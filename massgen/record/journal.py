"""The run's journal: `events.jsonl`, written so that a crash loses nothing decided.

Every event is one JSON line. A *decided* event (`DECIDED`: the run started, an answer
was published, a vote cast or invalidated, an agent failed, coordination or the run
finished) is written to the file (flushed to the OS) before `append` returns, and the
orchestrator emits it before it acts on it (before peers are told, before the
presentation starts), so after a SIGKILL at any moment the journal holds every decision
the run went on to act upon. It is fdatasynced too, for a crash of the machine, by the
run's writer thread (`background.py`): within a batch's pause (50 ms) of being written,
never on the event loop, and always before `close` returns. Stream chunks and other
events are only buffered or flushed: they are cheap and a resume does not need them.

A process killed mid-write leaves at most one torn last line. `read_journal` drops it,
and `Journal` cuts it off before appending, so the next attempt's first line is whole.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from massgen.core import events as ev
from massgen.record.background import Background

DECIDED = (
    ev.RunStarted,
    ev.AnswerPublished,
    ev.AnswerChecked,  # a verdict the resumed run's ranking and prompts depend on
    ev.VoteCast,
    ev.VoteInvalidated,
    ev.AgentFailed,
    ev.CoordinationFinished,
    ev.RunFinished,
    ev.OrchestrationRestarted,
)

# Streamed chunks: many per second, so they are only buffered (a tool's progress lines too).
_BUFFERED = (ev.TextDelta, ev.ReasoningDelta, ev.FinalTextDelta, ev.ToolCallProgress)


class JournalError(Exception):
    """The journal is damaged before its last line: it cannot be trusted for a resume."""


class Journal:
    """Appends events to one `events.jsonl`. `fsync=False` only for benchmarks. `writer`:
    the run's writer thread, which syncs it (a journal of its own has one of its own)."""

    def __init__(self, path: Path, *, fsync: bool = True, writer: Background | None = None) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._own_writer = writer is None
        self._writer = writer or Background("massgen-journal")
        _cut_torn_tail(self.path)
        self._file = self.path.open("a", encoding="utf-8")

    @property
    def closed(self) -> bool:
        return self._file.closed

    def append(self, event: ev.AnyEvent) -> None:
        self._file.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
        if isinstance(event, _BUFFERED):
            return
        self._file.flush()
        if self._fsync and isinstance(event, DECIDED):
            self._writer.sync(self._file)

    def close(self) -> None:
        """Flush, and return once every line is synced (the writer's other work too)."""
        if self._file.closed:
            return
        try:
            self._file.flush()
            if self._fsync:
                self._writer.sync(self._file)
            if self._own_writer:
                self._writer.close()
            else:
                self._writer.flush()
        finally:
            self._file.close()


def read_journal(path: Path) -> list[ev.AnyEvent]:
    """Every event of a journal, in order; a torn (unparseable) last line is dropped.

    Raises:
        OSError: the file cannot be read.
        JournalError: a line before the last is not an event.
    """
    lines = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
    torn_tail = lines[-1]  # "" when the file ends in a newline, as a whole one does
    events: list[ev.AnyEvent] = []
    for number, line in enumerate(lines[:-1], start=1):
        event = _parse(line)
        if event is None:
            raise JournalError(f"{path}: line {number} is not an event")
        events.append(event)
    if torn_tail:
        last = _parse(torn_tail)  # a whole line whose newline was lost still counts
        if last is not None:
            events.append(last)
    return events


def _parse(line: str) -> ev.AnyEvent | None:
    try:
        return ev.event_from_dict(json.loads(line))
    except (ValueError, KeyError, TypeError):
        return None


def _cut_torn_tail(path: Path) -> None:
    """Drop an unterminated last line (or end it, when it is a whole event, as
    `read_journal` reads it), so appended lines never join a torn one."""
    try:
        with path.open("rb+") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            f.seek(0)
            data = f.read()
            start = data.rfind(b"\n") + 1
            if _parse(data[start:].decode("utf-8", errors="replace")) is not None:
                f.write(b"\n")
            else:
                f.truncate(start)
    except FileNotFoundError:
        return
