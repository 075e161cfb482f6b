"""The progress bar of a batch: done, failed, running, tokens, cost and time left (rich),
on stderr. Not a terminal: one line at the end instead of a bar."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from massgen.batch.runner import Tally


class BatchProgress:
    def __init__(self, *, live: bool | None = None, console: Any = None) -> None:
        self.live = sys.stderr.isatty() if live is None else live
        self.console = console  # a rich Console; None: one on stderr
        self._progress: Any = None
        self._task: Any = None
        self.last: Tally | None = None

    def __enter__(self) -> BatchProgress:
        if self.live:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("batch"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console or Console(stderr=True),
                refresh_per_second=4,
            )
            self._progress.start()
            self._task = self._progress.add_task("batch", total=None, counts="")
        return self

    def update(self, tally: Tally) -> None:
        self.last = tally
        if self._progress is None:
            return
        self._progress.update(
            self._task,
            total=tally.total or None,
            completed=tally.done + tally.failed,
            counts=counts(tally),
        )

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
        elif self.last is not None:
            print(f"batch: {counts(self.last)}", file=sys.stderr, flush=True)


def counts(tally: Tally) -> str:
    return (
        f"done {tally.done}  failed {tally.failed}  running {tally.running}  "
        f"tokens {tally.tokens:,}  cost ${tally.cost:.4f}"
    )
