"""What the journal costs: appending a decided event (flushed and fsynced, so a SIGKILL or
a power cut cannot lose it) against a streamed text delta (buffered only).

    python -m bench.journal            # print the section, 500 events of each kind
    python -m bench                    # the same numbers as section 9 of docs/benchmarks.md

The journal lives where the run's log directory would: under the current directory
(`.massgen/`), since the disk it sits on is what an fsync costs. A temporary directory
is used and removed; set `--dir` to measure another disk.
"""

from __future__ import annotations

import argparse
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
    decided_s: float  # per decided event, fsynced
    decided_unsynced_s: float  # per decided event with fsync off: the write and flush alone
    delta_s: float  # per streamed text delta
    answer_chars: int

    @property
    def fsync_s(self) -> float:
        """What the fsync adds to one decided event."""
        return max(0.0, self.decided_s - self.decided_unsynced_s)


def journal_cost(
    events: int = 500, answer_chars: int = 2000, where: Path | None = None
) -> JournalCost:
    base = where or Path.cwd()
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".massgen-bench-journal-", dir=base) as scratch:
        answer = ev.AnswerPublished(agent="a", label="agent1.1", content="x" * answer_chars)
        delta = ev.TextDelta(agent="a", text="word ")
        decided = _per_event(Path(scratch) / "synced.jsonl", answer, events, fsync=True)
        unsynced = _per_event(Path(scratch) / "unsynced.jsonl", answer, events, fsync=False)
        deltas = _per_event(Path(scratch) / "deltas.jsonl", delta, events * 20, fsync=True)
    return JournalCost(events, decided, unsynced, deltas, answer_chars)


def _per_event(path: Path, event: ev.AnyEvent, n: int, *, fsync: bool) -> float:
    journal = Journal(path, fsync=fsync)
    started = time.perf_counter()
    for _ in range(n):
        journal.append(event)
    took = time.perf_counter() - started
    journal.close()
    return took / n


def section(cost: JournalCost | None) -> str:
    if cost is None:
        return ""
    rows = [
        [f"decided event ({cost.answer_chars:,}-char answer), fsynced", _us(cost.decided_s)],
        ["the same, fsync off (write + flush only)", _us(cost.decided_unsynced_s)],
        ["fsync's share of a decided event", _us(cost.fsync_s)],
        ["streamed text delta (buffered, never fsynced)", _us(cost.delta_s)],
    ]
    return "\n\n".join(
        [
            "## 9. Journal (events.jsonl)",
            f"{cost.events} decided events and {cost.events * 20:,} text deltas appended to a "
            "journal on the disk of the working directory. A run has a few dozen decided "
            "events (answers, votes, failures, the end), so the fsyncs add about "
            f"{cost.fsync_s * 50 * 1000:.1f} ms to a run of 50 of them; deltas, thousands "
            "per run, cost what a buffered write costs.",
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
