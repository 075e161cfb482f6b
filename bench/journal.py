"""What the journal costs the run: appending a decided event (written and flushed, so a
SIGKILL cannot lose it; fdatasynced by the recorder's writer thread, for a power cut)
against a streamed text delta (buffered only), and what the same event cost when the run
waited for its fsync itself.

    python -m bench.journal            # print the section, 500 events of each kind
    python -m bench                    # the same numbers as section 9 of docs/benchmarks.md

The journal lives where the run's log directory would: under the current directory
(`.massgen/`), since the disk it sits on is what an fsync costs. A temporary directory
is used and removed; set `--dir` to measure another disk.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.report import table
from massgen.core import events as ev
from massgen.record.journal import Journal


@dataclass(frozen=True, slots=True)
class JournalCost:
    events: int
    decided_s: float  # per decided event, as the run pays it (the fsync is the thread's)
    decided_synced_s: float  # per decided event, fsynced before append returns (as before)
    decided_unsynced_s: float  # per decided event with fsync off: the write and flush alone
    delta_s: float  # per streamed text delta
    close_s: float  # closing a journal of `events` decided events: the last fsync waited for
    answer_chars: int

    @property
    def fsync_s(self) -> float:
        """What an fsync on the run's own thread added to one decided event."""
        return max(0.0, self.decided_synced_s - self.decided_unsynced_s)


def journal_cost(
    events: int = 500, answer_chars: int = 2000, where: Path | None = None
) -> JournalCost:
    base = where or Path.cwd()
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".massgen-bench-journal-", dir=base) as scratch:
        answer = ev.AnswerPublished(agent="a", label="agent1.1", content="x" * answer_chars)
        delta = ev.TextDelta(agent="a", text="word ")
        decided, close = _per_event(Path(scratch) / "decided.jsonl", answer, events, fsync=True)
        synced = _inline_synced(Path(scratch) / "synced.jsonl", answer, events)
        unsynced, _ = _per_event(Path(scratch) / "unsynced.jsonl", answer, events, fsync=False)
        deltas, _ = _per_event(Path(scratch) / "deltas.jsonl", delta, events * 20, fsync=True)
    return JournalCost(events, decided, synced, unsynced, deltas, close, answer_chars)


def _per_event(path: Path, event: ev.AnyEvent, n: int, *, fsync: bool) -> tuple[float, float]:
    """Seconds per `append`, and for the `close` that waits for the last sync."""
    journal = Journal(path, fsync=fsync)
    started = time.perf_counter()
    for _ in range(n):
        journal.append(event)
    took = time.perf_counter() - started
    journal.close()
    return took / n, time.perf_counter() - started - took


def _inline_synced(path: Path, event: ev.AnyEvent, n: int) -> float:
    """Seconds per event written, flushed and fdatasynced on the caller's thread: what the
    journal cost the run before its writer thread took the fsyncs."""
    sync = getattr(os, "fdatasync", os.fsync)
    with path.open("a", encoding="utf-8") as file:
        started = time.perf_counter()
        for _ in range(n):
            file.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
            file.flush()
            sync(file.fileno())
        took = time.perf_counter() - started
    return took / n


def section(cost: JournalCost | None) -> str:
    if cost is None:
        return ""
    rows = [
        [
            f"decided event ({cost.answer_chars:,}-char answer), as a run appends it",
            _us(cost.decided_s),
        ],
        [
            "the same, fsynced before append returns (before the writer thread)",
            _us(cost.decided_synced_s),
        ],
        ["the same, fsync off (write + flush only)", _us(cost.decided_unsynced_s)],
        ["streamed text delta (buffered, never fsynced)", _us(cost.delta_s)],
    ]
    return "\n\n".join(
        [
            "## 9. Journal (events.jsonl)",
            f"{cost.events} decided events and {cost.events * 20:,} text deltas appended to a "
            "journal on the disk of the working directory. A decided event is written and "
            "flushed as it is appended (a killed process keeps it); its fdatasync is the "
            "recorder's writer thread's, batched (`record/background.py`), so a run's event "
            "loop no longer waits for it: an fsync on the loop cost "
            f"{cost.fsync_s * 1e6:.1f} µs per decided event, about "
            f"{cost.fsync_s * 50 * 1000:.1f} ms in a run of 50 of them. Closing the journal "
            f"after the {cost.events} events (waiting for their last sync) took "
            f"{cost.close_s * 1000:.1f} ms. Deltas, thousands per run, cost what a buffered "
            "write costs.",
            table(["append", "µs per event"], rows),
        ]
    )


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.journal", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--events", type=int, default=500, help="decided events (default 500)")
    parser.add_argument("--dir", type=Path, help="where the journal is written (default: here)")
    args = parser.parse_args(argv)
    print(section(journal_cost(args.events, where=args.dir)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
