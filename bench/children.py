"""This process's child processes while a `with ChildWatch()` block runs: when each one
started, when it ended, and its peak memory. Linux only (it reads /proc).

- started: the kernel's start time of the process (`/proc/PID/stat`, in clock ticks since
  boot, so 10 ms steps), on `now()`'s clock;
- ended: when its pidfd became readable (the process exited), seen by a thread that
  waits on them;
- name and peak RSS: its name (`comm`) and `VmHWM` (the high-water mark of its resident
  memory), read every poll while it lives, so growth in its last poll interval can be
  missed; and, for all of them, the largest sum of the peaks of those alive at one poll
  (`peak_mb`): a short helper counts while it runs, not after. A child that has not yet
  replaced this program (`exec`) shares or copies this process's memory: it is not
  counted until it has.

Descendants are found by scanning /proc for parent ids every `POLL` seconds (about a
millisecond a scan with a hundred processes); one that starts and ends between two scans
is not seen.
"""

from __future__ import annotations

import os
import select
import threading
import time
from dataclasses import dataclass
from pathlib import Path

POLL = 0.01  # seconds between scans of /proc
SETTLE = 5.0  # seconds the block's end waits for children still running to end
TICKS = os.sysconf("SC_CLK_TCK")


def now() -> float:
    """Seconds since boot, the clock /proc's start times count on."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


@dataclass(slots=True)
class Child:
    pid: int
    name: str
    started: float  # now() at its start (10 ms steps)
    ended: float | None = None  # now() when it exited; None: still running at the end
    peak_kb: int = 0  # VmHWM, the last read while it lived


class ChildWatch:
    """The descendants of this process that start while the block runs."""

    def __init__(self) -> None:
        self.children: dict[int, Child] = {}
        self._fds: dict[int, int] = {}  # pid -> pidfd, for the live ones
        self._together_kb = 0  # the largest sum of the live children's peaks at one poll
        self._known = set(_descendants())  # already running: not this block's
        self._closing_by: float | None = None  # set at the block's end: wait until then
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> ChildWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._closing_by = time.monotonic() + SETTLE
        self._thread.join()
        for fd in self._fds.values():
            os.close(fd)

    @property
    def first_start(self) -> float | None:
        return min((c.started for c in self.children.values()), default=None)

    @property
    def last_end(self) -> float | None:
        """When the last child ended; None if none started or one did not end."""
        ends = [c.ended for c in self.children.values()]
        return None if not ends or None in ends else max(e for e in ends if e is not None)

    @property
    def peak_mb(self) -> float:
        """The children's memory at once: at each poll, the peaks of those alive then,
        summed; the largest such sum (an upper bound of what they held together)."""
        return self._together_kb / 1024

    def _watch(self) -> None:
        while True:
            self._scan()  # after the block's end too: a child started at its very end
            closing = self._closing_by
            if closing is not None and (not self._fds or time.monotonic() > closing):
                return
            ready, _, _ = select.select(list(self._fds.values()), [], [], POLL)
            at = now()
            for pid, fd in list(self._fds.items()):
                if fd in ready:
                    self.children[pid].ended = at
                    os.close(self._fds.pop(pid))

    def _scan(self) -> None:
        for pid in _descendants():
            if pid in self._known:
                continue
            self._known.add(pid)
            try:
                fd = os.pidfd_open(pid)
                stat = _stat(pid)
            except OSError:  # already gone
                continue
            self.children[pid] = Child(pid, "", int(stat[19]) / TICKS)
            self._fds[pid] = fd
        for pid in self._fds:
            _read(self.children[pid])
        together = sum(self.children[pid].peak_kb for pid in self._fds)
        self._together_kb = max(self._together_kb, together)


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name: [0] state, [1] ppid, [19] start."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _descendants() -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(_stat(int(entry))[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [os.getpid()]
    while todo:
        parent = todo.pop()
        kids = [pid for pid, ppid in parents.items() if ppid == parent]
        found += kids
        todo += kids
    return found


OWN_EXE = os.path.realpath(f"/proc/{os.getpid()}/exe")


def _read(child: Child) -> None:
    """The child's name and peak RSS now, once it runs a program of its own."""
    try:
        if os.path.realpath(f"/proc/{child.pid}/exe") == OWN_EXE:
            return
        status = Path(f"/proc/{child.pid}/status").read_text().splitlines()
    except OSError:  # gone
        return
    for line in status:
        if line.startswith("Name:"):
            child.name = line.partition(":")[2].strip()
        elif line.startswith("VmHWM:"):
            child.peak_kb = int(line.split()[1])
