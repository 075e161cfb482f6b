"""Record and replay for a batch (`massgen batch ... --replay OUTDIR`).

Every job journals its model responses: a team run in its log directory
(`runs/<id>/team/responses.jsonl`), a baseline job beside it
(`runs/<id>/responses-<method>.jsonl`). Given the `--out` of a recorded batch, each job
answers from its own record and calls the model only for what is new (`backends/replay.py`).

So that an identical rerun gives byte-identical `results.jsonl`, the driver writes rows in
the order the recording wrote them (a row waits, in memory, for the rows recorded before
it), and a job that made no live call reports the seconds its recording took: the
answer is the recording's, and so is what it cost. The calls each job made, live and
replayed, go to `calls.jsonl`, not into the rows, and `summary.json` adds them up.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from massgen.batch import store
from massgen.core.errors import ConfigError

CALLS = "calls.jsonl"
Row = dict[str, Any]
Key = tuple[str, str]


def check_source(replay: Path, out: Path) -> None:
    """A recorded batch, and not the one being written. Raises ConfigError."""
    if not (replay / store.RESULTS).is_file():
        raise ConfigError(
            f"no recorded batch in {replay}",
            file=str(replay / store.RESULTS),
            fix="--replay takes the --out of an earlier batch",
        )
    if replay.resolve() == out.resolve():
        raise ConfigError(
            "--replay and --out are the same directory",
            fix="replay into a new --out (the recorded one is only read)",
        )


def recorded_order(replay: Path | None) -> list[Key]:
    """The keys of the recorded results, in the order of their last rows."""
    if replay is None:
        return []
    return list(store.read_rows(replay))


class ResultsWriter:
    """`results.jsonl` as the driver writes it, plus the calls side file; with a record,
    rows are released in the recorded order. `done`: keys already finished in `out`;
    `expected`: the keys this batch can write (None: all), so that a row never waits for
    one of the recording's methods that this batch does not run."""

    def __init__(
        self,
        out: Path,
        replay: Path | None,
        done: Iterable[Key] = (),
        expected: Iterable[Key] | None = None,
    ) -> None:
        self.results = store.ResultsFile(out)
        self._calls = (out / CALLS).open("a", encoding="utf-8")
        finished = set(done)
        wanted = set(expected) if expected is not None else None
        self._order = [
            k
            for k in recorded_order(replay)
            if k not in finished and (wanted is None or k in wanted)
        ]
        self._place = {key: index for index, key in enumerate(self._order)}
        self._next = 0
        self._held: dict[Key, Row] = {}

    def append(self, row: Row) -> None:
        calls = row.pop("calls", None)
        key = store.key(row)
        if calls is not None:
            line = {"id": key[0], "method": key[1], **calls}
            self._calls.write(json.dumps(line, sort_keys=True) + "\n")
            self._calls.flush()
            os.fsync(self._calls.fileno())
        if key not in self._place or self._place[key] < self._next:
            self.results.append(row)
            return
        self._held[key] = row
        while self._next < len(self._order) and self._order[self._next] in self._held:
            self.results.append(self._held.pop(self._order[self._next]))
            self._next += 1

    def close(self) -> None:
        """Rows whose predecessors never came (a smaller --limit) go last, in order."""
        for key in sorted(self._held, key=self._place.__getitem__):
            self.results.append(self._held.pop(key))
        self.results.close()
        self._calls.close()


def read_calls(out: Path) -> dict[Key, dict[str, int]]:
    """The latest call counts per (id, method)."""
    path = out / CALLS
    latest: dict[Key, dict[str, int]] = {}
    if not path.exists():
        return latest
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                data = json.loads(line)
                latest[(str(data["id"]), str(data["method"]))] = {
                    "live_calls": int(data["live_calls"]),
                    "replayed_calls": int(data["replayed_calls"]),
                }
            except (ValueError, KeyError, TypeError):
                continue
    return latest


def add_calls(summary: Mapping[str, Any], out: Path, ids: Sequence[str]) -> dict[str, Any]:
    """The summary with each method's live and replayed calls over the batch's questions
    (null for jobs recorded before calls were counted) and their totals."""
    calls = read_calls(out)
    wanted = set(ids)
    methods = []
    for entry in summary["methods"]:
        counts = [c for (tid, m), c in calls.items() if m == entry["method"] and tid in wanted]
        live = sum(c["live_calls"] for c in counts) if counts else None
        replayed = sum(c["replayed_calls"] for c in counts) if counts else None
        methods.append({**entry, "live_calls": live, "replayed_calls": replayed})
    return {**summary, "methods": methods}


def calls_line(summary: Mapping[str, Any]) -> str | None:
    """`model calls: N live, M replayed` over all methods; None when none were counted."""
    entries = [e for e in summary["methods"] if e.get("live_calls") is not None]
    if not entries:
        return None
    live = sum(e["live_calls"] for e in entries)
    replayed = sum(e["replayed_calls"] for e in entries)
    return f"model calls: {live:,} live, {replayed:,} replayed"
