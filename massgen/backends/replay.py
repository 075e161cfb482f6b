"""Record and replay: every model response of a run, journalled under a hash of its request.

`responses.jsonl` holds one line per call: the request's key (sha256 of the canonical JSON
of the `Request`, the backend's identity and the member's id; never a key or a secret),
its occurrence `n` (the n-th ask of that key), the events the backend yielded (Usage
among them), how the call ended, and two numbers that fix the run's interleaving: `seq`,
the call's place in the order in which calls completed, and `asked`, how many calls had
completed when it was asked.

A run given a record (`--replay`) answers a request from it when its key and occurrence
match, and calls the model only for what is new. Replayed responses come at once, so the
order of the recording is kept explicitly: the response recorded as the c-th to complete
is delivered only after the c-1 before it, and after every request the recording had
asked before it has been asked again. Agents therefore see the same answers when they
ask, and an identical rerun asks the same requests and makes no call. A request that is
not in the record waits until the replay is quiet (it may be a request the recording's
interleaving would have cancelled), then ends the ordering: from there the run is new.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import time
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from massgen.backends.base import Backend
from massgen.core import errors
from massgen.core import events as ev
from massgen.core.errors import BackendError, ConfigError
from massgen.core.types import (
    BackendEvent,
    Finish,
    HostedActivity,
    ReasoningChunk,
    Request,
    Source,
    TextChunk,
    ToolCall,
    Usage,
)
from massgen.log import logger
from massgen.record.background import Background

JOURNAL = "responses.jsonl"
MAX_ENTRY_BYTES = 4 * 1024 * 1024  # a longer response is journalled without its events
MAX_RECORD_BYTES = 512 * 1024 * 1024  # a record is read whole: a bound on what that costs
QUIET_SECONDS = 0.5  # a request not in the record waits this long for the replay to settle
STALL_SECONDS = 30.0  # the recorded order is given up after this long without progress

_EVENTS: dict[str, type] = {
    cls.__name__: cls
    for cls in (TextChunk, ReasoningChunk, ToolCall, HostedActivity, Usage, Finish)
}
_ERRORS: dict[str, type[BackendError]] = {
    cls.__name__: cls
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, BackendError)
}


# --- keys and events on disk ---------------------------------------------------------------


def request_key(request: Request, backend: str, agent: str) -> str:
    """sha256 of the request (messages, tools, parameters, schema, hosted tools; media by
    their hash), the backend's identity and the member asking."""
    plain = {"backend": backend, "agent": agent, "request": _plain(request)}
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def backend_identity(kind: str, model: str | None, base_url: str | None) -> str:
    """`type:model@host/path`: the base URL without credentials or query."""
    where = ""
    if base_url:
        parts = urlsplit(base_url)
        where = f"{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"
    return f"{kind}:{model or ''}@{where}"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, bytes):
        return {"sha256": hashlib.sha256(value).hexdigest()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def dump_event(event: BackendEvent) -> dict[str, Any]:
    return {"type": type(event).__name__, **dataclasses.asdict(event)}


def load_event(data: Mapping[str, Any]) -> BackendEvent:
    """Raises KeyError/TypeError for a line that is not an event."""
    cls = _EVENTS[data["type"]]
    fields = {k: v for k, v in data.items() if k != "type"}
    if cls is HostedActivity:
        fields["sources"] = tuple(Source(**s) for s in fields.get("sources") or ())
    event: BackendEvent = cls(**fields)
    return event


@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    """One recorded call. `end`: done, closed (the reader stopped early), cancelled, error
    (a provider error, replayed as such) or dropped (not replayable: too long, or an
    error that is not a provider's)."""

    key: str
    n: int
    seq: int | None
    asked: int
    end: str
    events: tuple[BackendEvent, ...] = ()
    error: dict[str, Any] | None = None

    def failure(self) -> BackendError:
        data = self.error or {}
        cls = _ERRORS.get(str(data.get("type")), BackendError)
        return cls(str(data.get("message", "")), provider=str(data.get("provider", "")))


@dataclasses.dataclass(slots=True)
class Record:
    """What a recorded run answered: its entries by (key, n), and its coordination seed."""

    entries: dict[tuple[str, int], Entry]
    seed: int | None = None

    @property
    def by_asked(self) -> list[Entry]:
        return sorted(self.entries.values(), key=lambda e: e.asked)


def read_record(directory: Path, name: str = JOURNAL) -> Record:
    """The last session of `directory/name` (a batch question rerun after a kill starts a
    new session in the same file). Raises ConfigError when there is none."""
    path = directory / name
    if not path.is_file():
        raise ConfigError(
            f"no recorded responses in {directory}",
            file=str(path),
            fix="give the log directory of a run (or the --out of a batch) made by this version",
        )
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ConfigError(f"the record is over {MAX_RECORD_BYTES // 2**20} MiB", file=str(path))
    record = Record({})
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                data = json.loads(line)
                if "session" in data:
                    record = Record({})
                elif "seed" in data:
                    record.seed = int(data["seed"])
                else:
                    entry = _entry(data)
                    record.entries[(entry.key, entry.n)] = entry
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a torn last line, or one this version cannot read: asked live
    return record


def borrow(record: Record | None, other: Record) -> Record:
    """`record` with the finished calls of `other` it lacks, outside its order: a batch's
    single-call baseline asks exactly what its member's first answer in the team asked
    (the same request, byte for byte), so the team's record answers it."""
    merged = Record(dict(record.entries) if record else {}, record.seed if record else None)
    for where, entry in other.entries.items():
        if entry.end == "done":
            merged.entries.setdefault(where, dataclasses.replace(entry, seq=None))
    return merged


def _entry(data: Mapping[str, Any]) -> Entry:
    seq = data.get("seq")
    events = tuple(load_event(e) for e in data.get("events") or ())
    return Entry(
        str(data["key"]),
        int(data["n"]),
        None if seq is None else int(seq),
        int(data["asked"]),
        str(data["end"]),
        events,
        data.get("error"),
    )


# --- the tape: journal, record and order of one run ------------------------------------------


class Tape:
    """One run's (or one batch job's) journal of responses and, when replaying, its record.

    `path`: where to journal (None: nowhere, e.g. a run without logs); each process that
    journals into it starts a new session there, and a record is the last session (a
    resumed run's record holds its last attempt's calls). Also an event sink: it keeps the
    run's coordination seed beside the responses. A line is in the file when its call
    ends and synced by `writer`'s thread soon after, all of them before `close` returns.
    """

    def __init__(
        self, path: Path | None, record: Record | None = None, writer: Background | None = None
    ) -> None:
        self.record = record
        self.gating = bool(record and record.entries)
        self.live = self.replayed = 0
        self.done = 0  # calls completed in this run, in order
        # The recorded completions, in order, and those that have come to pass here.
        self._seqs = (
            sorted(e.seq for e in record.entries.values() if e.seq is not None) if record else []
        )
        self._passed: set[int] = set()
        self._first_pending = 0
        self._asks: Counter[str] = Counter()
        self._arrived: set[tuple[str, int]] = set()
        # A request the recording saw cancelled may be cancelled before it is asked here:
        # nothing waits for it (what it read before, if anything, is replayed if it comes).
        # An entry borrowed from another job's record (`borrow`) has no place in it.
        self._order = (
            [e for e in record.by_asked if e.end != "cancelled" and e.seq is not None]
            if record
            else []
        )
        self._first_missing = 0
        self._changed = asyncio.Event()
        self._last_progress = time.monotonic()
        self._file = None
        # Syncs the lines, in batches, off the event loop (`record/background.py`).
        self._writer = writer or Background("massgen-tape")
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            _cut_torn_tail(path)
            self._file = path.open("a", encoding="utf-8")
            self._write({"session": 1})

    @property
    def seed(self) -> int | None:
        return self.record.seed if self.record else None

    def __call__(self, event: ev.AnyEvent) -> None:
        if isinstance(event, ev.RunStarted):
            self._write({"seed": event.seed})

    def close(self) -> None:
        """Close the journal once every line of it is synced."""
        if self._file is None:
            return
        file, self._file = self._file, None
        try:
            try:
                self._writer.sync(file)
                self._writer.close()
            finally:
                file.close()  # raises too when what it still holds cannot be written
        except OSError as error:
            logger.warning("responses journal not synced ({}); it may lack its last calls", error)

    # --- asking and finishing ---------------------------------------------------------------

    def ask(self, key: str) -> tuple[int, int]:
        """Register an ask: its occurrence and how many calls had completed before it."""
        n = self._asks[key]
        self._asks[key] += 1
        self._arrived.add((key, n))
        self._progress()
        return n, self.done

    def lookup(self, key: str, n: int) -> Entry | None:
        entry = self.record.entries.get((key, n)) if self.record else None
        return None if entry is None or entry.end == "dropped" else entry

    def finished(
        self,
        key: str,
        n: int,
        asked: int,
        end: str,
        events: list[BackendEvent],
        error: Any,
        recorded: Entry | None = None,
    ) -> None:
        """Journal a call that ended. `recorded`: the entry it replayed; the order moves
        past it however it ended here."""
        if recorded is not None and recorded.seq is not None:
            self._passed.add(recorded.seq)
        seq = None
        if end != "cancelled":
            seq, self.done = self.done, self.done + 1
        line: dict[str, Any] = {"key": key, "n": n, "seq": seq, "asked": asked, "end": end}
        if isinstance(error, BackendError):
            line["error"] = {
                "type": type(error).__name__,
                "message": error.message[:2000],
                "provider": error.provider,
            }
        line["events"] = [dump_event(e) for e in events]
        text = json.dumps(line, ensure_ascii=False)
        if len(text) > MAX_ENTRY_BYTES or end == "dropped":
            line.update(end="dropped", events=[])
            text = json.dumps(line, ensure_ascii=False)
        self._write_text(text)
        self._progress()

    def _write(self, data: Mapping[str, Any]) -> None:
        self._write_text(json.dumps(data, ensure_ascii=False))

    def _write_text(self, text: str) -> None:
        """The line in the file now (a killed process keeps it), synced soon after."""
        if self._file is None:
            return
        try:
            self._file.write(text + "\n")
            self._file.flush()
            self._writer.sync(self._file)
        except OSError as error:  # a full disk loses the journal, never the run
            logger.warning("responses journal not written ({}); continuing without it", error)
            self.close()

    # --- the recorded order ----------------------------------------------------------------

    async def turn(self, seq: int) -> None:
        """Wait until the response that completed `seq`-th in the recording may complete:
        the ones before it have, and every request asked before it has been asked.

        The recording completed this call, so no cancellation reached it in time. One that
        reaches it here, while it waits, arrived sooner than it did then (a peer's answer
        interrupts a run as its response lands: which comes first is a matter of
        microseconds): it is held back for at most QUIET_SECONDS, long enough for the
        order to reach this call if the run is still the recording's; a second one, or a
        turn that does not come, cancels it after all."""

        def ready() -> bool:
            return self._completed_before(seq) and self._asked_before(seq)

        try:
            await self._wait(ready, STALL_SECONDS)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is None or not self.gating:
                raise
            task.uncancel()
            deadline = time.monotonic() + QUIET_SECONDS
            while self.gating and not ready():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await self._changed.wait()

    async def quiet(self) -> None:
        """A request not in the record: wait until nothing moves, then end the order."""
        await self._wait(lambda: False, QUIET_SECONDS)

    async def ungated(self) -> None:
        """Until the recorded order ends (a response the recording saw cancelled waits
        here for its own cancellation)."""
        await self._wait(lambda: False, None)

    async def _wait(self, ready: Callable[[], bool], limit: float | None) -> None:
        while self.gating and not ready():
            changed = self._changed
            if limit is None:
                await changed.wait()
                continue
            left = self._last_progress + limit - time.monotonic()
            if left <= 0:
                self._end_order(f"nothing moved for {limit:g}s")
                return
            # Not `wait_for`: on 3.11 it can swallow a cancellation that meets the event.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await changed.wait()

    def _completed_before(self, seq: int) -> bool:
        """Every recorded completion before `seq` has come to pass (here, or by its call
        being cancelled here: the order moves past it either way)."""
        seqs = self._seqs
        while self._first_pending < len(seqs) and seqs[self._first_pending] in self._passed:
            self._first_pending += 1
        return self._first_pending == len(seqs) or seqs[self._first_pending] >= seq

    def _asked_before(self, seq: int) -> bool:
        order = self._order
        while self._first_missing < len(order):
            first = order[self._first_missing]
            if (first.key, first.n) not in self._arrived:
                return first.asked > seq
            self._first_missing += 1
        return True

    def _end_order(self, why: str) -> None:
        logger.debug("replay: the recorded order ends ({}); new calls go to the model", why)
        self.gating = False
        self._progress()

    def _progress(self) -> None:
        self._last_progress = time.monotonic()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


def _cut_torn_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        data = handle.read()
        if not data.endswith(b"\n"):
            handle.truncate(data.rfind(b"\n") + 1)


# --- the backend ----------------------------------------------------------------------------


class TapedBackend:
    """A member's backend, journalled on `tape` and answered from its record when it has
    the request. Everything else (name, file stores, ...) is the inner backend's."""

    def __init__(self, inner: Backend, tape: Tape, identity: str, agent: str) -> None:
        self.inner, self.tape, self.identity, self.agent = inner, tape, identity, agent
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        tape = self.tape
        key = request_key(request, self.identity, self.agent)
        n, asked = tape.ask(key)
        entry = tape.lookup(key, n)
        source = _live(tape, self.inner, request) if entry is None else _replayed(tape, entry)
        events: list[BackendEvent] = []
        end, failure = "done", None
        try:
            async with contextlib.aclosing(source):
                async for event in source:
                    events.append(event)
                    yield event
        except GeneratorExit:
            end = "closed"  # the reader stopped early (a runaway guard)
            raise
        except asyncio.CancelledError:
            end = "cancelled"
            raise
        except BackendError as error:
            end, failure = "error", error
            raise
        except Exception:
            end = "dropped"
            raise
        finally:
            tape.finished(key, n, asked, end, events, failure, entry)


async def _live(tape: Tape, inner: Backend, request: Request) -> AsyncGenerator[BackendEvent, None]:
    if tape.gating:
        await tape.quiet()
    tape.live += 1
    stream = inner.stream(request)
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for event in stream:
            yield event


async def _replayed(tape: Tape, entry: Entry) -> AsyncGenerator[BackendEvent, None]:
    tape.replayed += 1
    if entry.end == "cancelled":
        for event in entry.events:  # what the recording read before it was cancelled
            yield event
        await tape.ungated()  # cancelled here too, unless the run has left the record
        return
    if entry.seq is not None:  # a borrowed entry has no turn: it comes at once
        await tape.turn(entry.seq)
    for event in entry.events:
        yield event
    if entry.end == "error":
        raise entry.failure()
