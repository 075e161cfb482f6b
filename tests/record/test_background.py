"""The run's log is written off the event loop (`record/background.py`), and is whole and
synced on disk when the run returns.

A slow disk is a `Background` whose writes and syncs sleep first: while the recorder and
the tape journal a run on it, the event loop keeps its pace, and after `close` every file
shows the end of the run and every journal line was synced."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path

import pytest
from recorded_run_script import FINAL, QUESTION, eventually

from massgen.api import TeamRun, load
from massgen.backends.replay import JOURNAL, Tape
from massgen.core import events as ev
from massgen.record import Recorder
from massgen.record.background import Background
from massgen.record.journal import read_journal
from massgen.record.state import STATUS_EVENTS
from massgen.testing.fake_provider import FakeProvider

SLOW = 0.25  # seconds a write or a sync takes on the slow disk


class SlowDisk(Background):
    """A disk that takes SLOW seconds per file and per sync; it notes how much of each
    journal a sync covered."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.synced: dict[str, int] = {}  # journal's name: its size at its last sync
        self.writes = 0

    def write_file(self, path: Path, text: str) -> None:
        time.sleep(SLOW)
        self.writes += 1
        super().write_file(path, text)

    def sync_file(self, fd: int) -> None:
        time.sleep(SLOW)
        super().sync_file(fd)
        self.synced[os.readlink(f"/proc/self/fd/{fd}")] = os.fstat(fd).st_size


async def journal_a_run(
    log_dir: Path, events: list[ev.AnyEvent], disks: tuple[SlowDisk, SlowDisk]
) -> float:
    """Record `events` and a model call after each decided one, as a run does, while a
    task that wants to run every 5 ms (a served run's progress) measures how late it was;
    returns the worst lateness, in seconds."""
    recorder = Recorder(log_dir, question=QUESTION, writer=disks[0])
    tape = Tape(log_dir / JOURNAL, writer=disks[1])
    done, late = asyncio.Event(), [0.0]

    async def tick() -> None:
        while not done.is_set():
            asked = time.monotonic()
            await asyncio.sleep(0.005)
            late[0] = max(late[0], time.monotonic() - asked - 0.005)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.01)
    for number, event in enumerate(events):
        recorder.handle(event)
        tape(event)
        if isinstance(event, ev.AnswerPublished | ev.VoteCast):
            key = f"call {number}"
            n, asked = tape.ask(key)
            tape.finished(key, n, asked, "done", [], None)
        await asyncio.sleep(0.001)  # the run's other work
    done.set()
    await ticker
    tape.close()
    recorder.close()
    return late[0]


def test_a_slow_disk_does_not_hold_up_the_loop_and_all_is_on_disk_at_the_end(
    tmp_path: Path, events: list[ev.AnyEvent]
) -> None:
    disks = (SlowDisk("recorder"), SlowDisk("tape"))
    late = asyncio.run(journal_a_run(tmp_path, events, disks))
    # Written on the loop, a single status.json would have held it up SLOW seconds.
    assert late < SLOW * 0.75, f"the loop was held up {late:.3f} s"
    # 21 status events, and 9 more files, coalesced into fewer writes (at most one per
    # status event: how many more coalesce depends on the machine's timing).
    assert disks[0].writes <= sum(isinstance(e, STATUS_EVENTS) for e in events)
    status = json.loads((tmp_path / "status.json").read_text())
    assert (status["status"], status["is_complete"]) == ("degraded", True)  # gamma failed
    assert status["agents"]["gamma"]["status"] == "failed"
    assert read_journal(tmp_path / "events.jsonl") == events
    assert (tmp_path / "final" / "answer.txt").read_text() == FINAL
    tape_lines = (tmp_path / JOURNAL).read_text().splitlines()
    assert len(tape_lines) == 2 + sum(
        isinstance(e, ev.AnswerPublished | ev.VoteCast) for e in events
    )
    # Every line of both journals was synced, not only written.
    assert disks[0].synced == {
        str(tmp_path / "events.jsonl"): (tmp_path / "events.jsonl").stat().st_size
    }
    assert disks[1].synced == {str(tmp_path / JOURNAL): (tmp_path / JOURNAL).stat().st_size}
    assert not [t for t in threading.enumerate() if t.name in ("recorder", "tape")]


def test_status_json_is_rewritten_with_the_newest_state_without_a_flush(
    tmp_path: Path, events: list[ev.AnyEvent]
) -> None:
    recorder = Recorder(tmp_path, question=QUESTION)
    for event in events[:-1]:  # all but RunFinished
        recorder.handle(event)
    status = eventually(
        lambda: json.loads((tmp_path / "status.json").read_text()),
        lambda status: status["coordination"]["phase"] == "presenting",
    )
    assert status["results"]["winner"] == "beta"
    recorder.close()


def test_a_full_disk_is_reported_by_the_next_call_once(tmp_path: Path) -> None:
    writer = Background("full")
    writer.put(tmp_path / "missing" / "dir" / "is" / "a" / "file", "x")
    (tmp_path / "blocker").write_text("a file where a folder should be")
    writer.put(tmp_path / "blocker" / "status.json", "{}")
    with pytest.raises(OSError):
        writer.flush()
    writer.put(tmp_path / "ok.txt", "fine")
    writer.close()
    assert (tmp_path / "ok.txt").read_text() == "fine"


def test_a_burst_waits_for_room_when_the_writer_is_full(tmp_path: Path) -> None:
    class Slow(Background):
        def write_file(self, path: Path, text: str) -> None:
            time.sleep(0.05)
            super().write_file(path, text)

    writer = Slow("bounded", max_pending=2)
    started = time.monotonic()
    for n in range(6):
        writer.put(tmp_path / f"f{n}", str(n))
    took = time.monotonic() - started
    writer.close()
    assert took >= 0.05  # a put waited for a batch to be taken
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"f{n}" for n in range(6)]


def test_a_run_returns_with_its_whole_log_on_disk(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    seen: list[ev.AnyEvent] = []
    with FakeProvider() as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url}
        agents = [{"id": f"a{n}", "backend": {**backend, "model": f"m{n}"}} for n in range(3)]
        run = TeamRun(load({"agents": agents}), "q", sinks=[seen.append])
        result = asyncio.run(run.execute())
    assert result.ok and result.log_dir is not None
    log = result.log_dir
    status = json.loads((log / "status.json").read_text())
    assert (status["status"], status["is_complete"]) == (str(result.status), True)
    assert status["totals"]["output_tokens"] == result.total_usage.output_tokens > 0
    assert read_journal(log / "events.jsonl") == seen
    assert (log / "final" / "answer.txt").read_text() == result.answer
    calls = [json.loads(line) for line in (log / JOURNAL).read_text().splitlines()]
    assert len([c for c in calls if "key" in c]) == result.live_calls > 0
