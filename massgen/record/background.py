"""A run's log writes, done by a thread of their own so the event loop never waits on the disk.

Writing a file atomically (a temp file, `os.replace`) costs milliseconds on a busy disk,
an fsync more; done on the event loop they stall every other task of the process (a
served run's progress, another request). A `Background` takes two kinds of work:

- `put(path, content)`: write the file atomically. A path put again before it was
  written is written once, with the newest content (status.json on every status event
  becomes one write per batch). `content` may be a function: it is called by the thread
  when the file is written, so it renders the state of that moment.
- `sync(file)`: fdatasync an append-only journal whose lines the caller has already
  written and flushed (in the OS: a killed process loses none of them). The syncs asked
  for while a batch was written are done once, in the next batch (group commit).

The thread writes one batch (every file pending, in the order of their last `put`, then
the syncs), then waits `pace` seconds before the next, so a burst of events costs a few
writes. `flush()` and `close()` skip the wait and return when everything asked for
before them is on disk; `close()` is called before a run reports its result. The thread
starts with the first piece of work and ends when there is none left (and it is not a
daemon: a process that ends without `close` still finishes what was asked). At most
`max_pending` files wait; one more waits for the thread (the disk's own pace, as before).

An error (a full disk) is kept and raised, once, by the next `put`, `sync`, `flush` or
`close`, so the caller learns of it as it did when it wrote itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from massgen.record.atomic import write_text

PACE_SECONDS = 0.05  # between batches: status.json is rewritten at most 20 times a second
MAX_PENDING = 64  # files waiting to be written; one more waits for the thread
FLUSH_SECONDS = 120.0  # a disk that takes longer to write a batch is reported as an error

Content = str | Callable[[], str]


class Background:
    """One run's writer thread (see the module docstring)."""

    def __init__(
        self,
        name: str = "massgen-log",
        *,
        pace: float = PACE_SECONDS,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._name = name
        self._pace = pace
        self._max_pending = max_pending
        self._cond = threading.Condition()
        self._files: dict[Path, Content] = {}
        self._syncs: dict[int, IO[Any]] = {}
        self._asked = 0  # pieces of work asked for, ever
        self._done = 0  # of those, how many are written
        self._hurry = False  # flush/close/backpressure: no pause before the next batch
        self._closing = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def put(self, path: Path, content: Content) -> None:
        with self._cond:
            self._raise_error()
            while len(self._files) >= self._max_pending and path not in self._files:
                self._hurry = True
                self._cond.notify_all()
                self._cond.wait(FLUSH_SECONDS)
            self._files.pop(path, None)  # written in the order of the last put
            self._files[path] = content
            self._asked += 1
            self._start()

    def sync(self, file: IO[Any]) -> None:
        with self._cond:
            self._raise_error()
            self._syncs[id(file)] = file
            self._asked += 1
            self._start()

    def flush(self) -> None:
        """Return when everything asked for so far is written. Raises what went wrong."""
        with self._cond:
            target = self._asked
            self._hurry = True
            self._cond.notify_all()
            if not self._cond.wait_for(lambda: self._done >= target, FLUSH_SECONDS):
                raise TimeoutError(f"the log writes did not finish in {FLUSH_SECONDS:g} s")
            self._raise_error()

    def close(self) -> None:
        """Flush, and let the thread end now rather than after its pause."""
        with self._cond:
            self._closing = True
        try:
            self.flush()
        finally:
            with self._cond:
                thread = self._thread
                self._cond.notify_all()
            if thread is not None and thread is not threading.current_thread():
                thread.join(FLUSH_SECONDS)

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._done == self._asked:
                    self._thread = None
                    self._cond.notify_all()
                    return
                files, syncs, upto = self._files, self._syncs, self._asked
                self._files, self._syncs, self._hurry = {}, {}, False
                self._cond.notify_all()  # a put waiting for room has it now
            error = self._write_batch(files, syncs)
            with self._cond:
                self._done = upto
                self._error = self._error or error
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._hurry or self._closing, self._pace)

    def _write_batch(
        self, files: dict[Path, Content], syncs: dict[int, IO[Any]]
    ) -> BaseException | None:
        """Write every file, then sync every journal; the first error, after trying all."""
        first: BaseException | None = None
        for path, content in files.items():
            try:
                self.write_file(path, content() if callable(content) else content)
            except Exception as error:  # kept for the caller, who raises it
                first = first or error
        for file in syncs.values():
            try:
                fd = file.fileno()
            except ValueError:
                continue  # closed by its owner, who flushed this writer first
            try:
                self.sync_file(fd)
            except OSError as error:
                first = first or error
        return first

    # The disk: a test's slow one overrides these.

    def write_file(self, path: Path, text: str) -> None:
        write_text(path, text)

    def sync_file(self, fd: int) -> None:
        _datasync(fd)


def _datasync(fd: int) -> None:
    """The data on disk; fdatasync skips the metadata an append does not need."""
    sync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync
    sync(fd)
