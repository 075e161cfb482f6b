"""Live runs: each a `TeamRun` in a task, with every event it has emitted so far.

A follower (an OpenAI stream, a web page) reads the events from any index and then waits
for more, so a page reloaded mid-run replays what it missed and carries on. Finished runs
stay in memory for a while (`KEEP_FINISHED`), then only their log directory remains.
A run started from the web page has a `WebApprover`: its open permission asks and the
agents' open questions (`coordination.broadcast: human`) are part of the page's feed
(`feed`); API runs have none: the config's headless policy answers, and nobody the questions.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from massgen.api import RunResult, TeamRun
from massgen.coordination.prompts import Turn
from massgen.core import events as ev
from massgen.core.types import Attachment
from massgen.runs.loading import LoadedConfig
from massgen.serve.approvals import ANSWER_SECONDS, OpenAsk, WebApprover
from massgen.serve.history import run_id_of
from massgen.serve.questions import ClosedQuestion, OpenQuestion

KEEP_FINISHED = 32  # finished runs kept in memory for followers; older ones are on disk
MAX_EVENTS = 200_000  # per run: a runaway stream stops being kept, the run goes on


class Busy(Exception):
    """Every run slot is taken; try again after `retry_after` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"all run slots are busy; retry after {retry_after} s")
        self.retry_after = retry_after


class Slots:
    """At most `limit` runs at once. A request past it waits up to `wait_s`, then is Busy."""

    def __init__(self, limit: int, wait_s: float = 2.0, retry_after: int = 5) -> None:
        self.limit, self.wait_s, self.retry_after = limit, wait_s, retry_after
        self._free = asyncio.Semaphore(limit)

    async def acquire(self) -> None:
        try:
            async with asyncio.timeout(self.wait_s):
                await self._free.acquire()
        except TimeoutError:
            raise Busy(self.retry_after) from None

    def release(self) -> None:
        self._free.release()


@dataclass(frozen=True, slots=True)
class OpenAsks:
    """The asks waiting for a person now (in the feed whenever they change)."""

    asks: tuple[OpenAsk, ...]


@dataclass(frozen=True, slots=True)
class Questions:
    """The agents' questions waiting for the person now, and how the recent ones closed
    (in the feed whenever either changes)."""

    open: tuple[OpenQuestion, ...]
    closed: tuple[ClosedQuestion, ...]


class LiveRun:
    """One team run and its events. `start()` launches it; `cancel()` stops it."""

    def __init__(
        self,
        team: str,
        loaded: LoadedConfig,
        question: str,
        history: Sequence[Turn] = (),
        *,
        ask_timeout_s: float | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> None:
        """`ask_timeout_s`: a person on the web page answers the permission asks, each
        within that time; None keeps the config's headless policy (API runs).
        `attachments`: the request's images, on every agent's task message."""
        self.team, self.question = team, question
        self.events: list[ev.AnyEvent] = []
        self._changed = asyncio.Event()
        self.approver = (
            WebApprover(self._wake, timeout_s=ask_timeout_s) if ask_timeout_s is not None else None
        )
        self.turn = TeamRun(
            loaded,
            question,
            history=history,
            sinks=[self._on_event],
            approver=self.approver,
            attachments=attachments,
        )
        self.turn.cli_args = ["serve", "--team", team]
        log_dir = self.turn.open_log()
        self.id = run_id_of(log_dir) if log_dir else f"live_{secrets.token_hex(8)}"
        self.task: asyncio.Task[RunResult] | None = None

    def start(self, on_done: Slots | None = None) -> None:
        """Run it in a task; `on_done`'s slot is released when it ends, however it ends."""
        self.task = asyncio.create_task(self.turn.execute(), name=f"massgen-serve-{self.id}")
        self.task.add_done_callback(lambda _: self._finished(on_done))

    def _finished(self, slots: Slots | None) -> None:
        if slots is not None:
            slots.release()
        if self.approver is not None:
            self.approver.close()
        self._wake()

    def _on_event(self, event: ev.AnyEvent) -> None:
        if len(self.events) < MAX_EVENTS:
            self.events.append(event)
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    @property
    def log_dir(self) -> Path | None:
        return self.turn.log_dir

    async def follow(self, start: int = 0) -> AsyncIterator[tuple[int, ev.AnyEvent]]:
        """(index, event) from `start` on, as they come, until the run ends."""
        async for item in self.feed(start):
            if not isinstance(item, OpenAsks | Questions):
                yield item

    async def feed(
        self, start: int = 0
    ) -> AsyncIterator[tuple[int, ev.AnyEvent] | OpenAsks | Questions]:
        """`follow`, with the open asks and questions after the replay and whenever they
        change."""
        index, shown, asked = max(0, start), None, None
        while True:
            changed = self._changed
            while index < len(self.events):
                yield index, self.events[index]
                index += 1
            if self.approver is not None:
                asks = tuple(self.approver.open_asks())
                if [a.id for a in asks] != shown:
                    shown = [a.id for a in asks]
                    yield OpenAsks(asks)
                questions = self._questions()
                seen = ([q.id for q in questions.open], [q.id for q in questions.closed])
                if seen != asked:
                    asked = seen
                    yield questions
            if self.done:
                return
            await changed.wait()

    def _questions(self) -> Questions:
        assert self.approver is not None
        book = self.approver.questions
        return Questions(tuple(book.open_questions()), tuple(book.closed_questions()))

    async def wait(self) -> None:
        """Until the run has ended, however it ends (waiting does not cancel it)."""
        assert self.task is not None, "LiveRun.wait() before start()"
        await asyncio.wait({self.task})

    def outcome(self) -> RunResult | str:
        """An ended run's result, or why it has none (cancelled, or what it raised)."""
        assert self.task is not None and self.task.done(), "LiveRun.outcome() before it ended"
        if self.task.cancelled():
            return "the run was cancelled"
        error = self.task.exception()
        if error is not None:
            return f"the team run failed: {error}"
        return self.task.result()

    async def cancel(self) -> None:
        """Stop the run and wait until its model calls are closed."""
        if self.task is not None and not self.task.done():
            if self.approver is not None:  # first, so its open questions say the run ended
                self.approver.questions.close()
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


class Runs:
    """The live and recently finished runs, by id, with the bound on how many run at once."""

    def __init__(self, max_concurrent: int, ask_timeout_s: float = ANSWER_SECONDS) -> None:
        self.slots = Slots(max_concurrent)
        self.ask_timeout_s = ask_timeout_s
        self._runs: OrderedDict[str, LiveRun] = OrderedDict()

    async def start(
        self,
        team: str,
        loaded: LoadedConfig,
        question: str,
        history: Sequence[Turn] = (),
        *,
        person: bool = False,
        attachments: Sequence[Attachment] = (),
    ) -> LiveRun:
        """A started run; with `person`, its permission asks wait for the web page.
        Raises Busy when no slot frees up in time."""
        await self.slots.acquire()
        try:
            timeout = self.ask_timeout_s if person else None
            run = LiveRun(
                team, loaded, question, history, ask_timeout_s=timeout, attachments=attachments
            )
        except BaseException:
            self.slots.release()
            raise
        run.start(on_done=self.slots)
        self._runs[run.id] = run
        self._forget_old()
        return run

    def get(self, run_id: str) -> LiveRun | None:
        return self._runs.get(run_id)

    def listed(self) -> list[LiveRun]:
        return list(reversed(self._runs.values()))

    async def close(self) -> None:
        """Cancel every run still going (the server is stopping)."""
        for run in list(self._runs.values()):
            await run.cancel()

    def _forget_old(self) -> None:
        finished = [rid for rid, run in self._runs.items() if run.done]
        for rid in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._runs[rid]
