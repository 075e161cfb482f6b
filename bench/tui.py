"""`python -m bench.tui`: the terminal app against the live view, in a real terminal (a pty).

Per display, the median of `--runs`:

- first frame: from spawning `massgen --display X` (3 agents) to the first screen that
  shows the run (the question for the app, an agent's panel for the live view), in
  seconds of wall time and in CPU seconds the process used until then;
- drawing: a whole run in which 8 agents stream 200 words a second each from the fake
  provider (every reply `WORDS` words), its CPU seconds less those of the same run with
  no view (`ui.display_type: silent`), as a share of one core over the streaming time.

CPU seconds rather than shares of wall time: on a loaded machine a starved process's
share says more about the other processes than about it. The fake provider runs in this
process (a thread), the measured CLI in its own. Written into the terminal-app section of
`docs/benchmarks.md` (`python -m bench` keeps it).
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import statistics
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import report
from bench.proc import ROOT
from bench.serve import Policy
from massgen.testing.fake_provider import FakeProvider

BEGIN, END = "<!-- terminal app: begin -->", "<!-- terminal app: end -->"
_say = report.progress("bench.tui")
QUESTION = "What is 6 times 7?"
SIZE = (120, 36)  # columns, rows
STREAMERS, RATE, WORDS = 8, 200, 1000  # agents, words a second each, words a reply
ROUNDS = 3  # replies each agent streams: its answer, its vote, the winner's presentation
ESCAPES = re.compile(
    rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|.)"
)
# What each display shows first once it draws the run; what the app shows at the end.
FIRST_SHOWN = {"tui": b"massgen \xc2\xb7 What is 6", "live": b"agent0"}
APP_DONE = b"done: q quits"


class Streaming(Policy):
    """`bench.serve.Policy` with `words` of varied text before each action (the same line
    over and over would be stopped as a runaway), ten words a line, some Markdown."""

    def _chatter(self) -> str:
        lines = [
            f"- case {n}: the product of {n} and 7 is {n * 7}, checked.\n" for n in range(1, 10_000)
        ]
        text = "".join(lines[: self.words // 10 + 1])
        return "### Working\n" + " ".join(text.split(" ")[: self.words]) + "\n\n"


@dataclass(frozen=True, slots=True)
class Sample:
    first_wall: float  # seconds, spawn to the first frame
    first_cpu: float  # CPU seconds the process used until then
    total_cpu: float  # CPU seconds of the whole run
    wall: float  # seconds, spawn to exit


class Terminal:
    """One CLI in a pty of SIZE, its output drained by a thread (a full pty blocks it);
    the times `markers` first appear in it, with the process's CPU time then."""

    def __init__(self, argv: list[str], cwd: Path, markers: tuple[bytes, ...]) -> None:
        self.seen: dict[bytes, tuple[float, float]] = {}
        self.started = time.monotonic()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: a terminal of SIZE, this interpreter's massgen
            os.chdir(cwd)
            os.environ.update(TERM="xterm-256color", COLUMNS=str(SIZE[0]), LINES=str(SIZE[1]))
            os.execv(argv[0], argv)
        import fcntl
        import termios

        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        self._markers = markers
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        tail = b""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            tail = (tail + data)[-100_000:]
            text = ESCAPES.sub(b"", tail)
            for marker in self._markers:
                if marker not in self.seen and marker in text:
                    self.seen[marker] = (time.monotonic() - self.started, self._cpu())

    def _cpu(self) -> float:
        """User and system CPU seconds of the process so far (its threads included)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def wait_for(self, marker: bytes, timeout: float = 300.0) -> tuple[float, float]:
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{marker!r} not shown within {timeout:g}s")
            time.sleep(0.005)
        return self.seen[marker]

    def press(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def finish(self, timeout: float = 300.0) -> tuple[float, float]:
        """Wait for the process to exit: (wall seconds since spawn, its CPU seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            pid, _, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return time.monotonic() - self.started, usage.ru_utime + usage.ru_stime
            if time.monotonic() > deadline:
                os.kill(self.pid, 9)
            time.sleep(0.01)


def measure(display: str, base_url: str, agents: int, work: Path, *, whole: bool) -> Sample:
    """One run; `whole`: to its end (the app quit with q), else killed at the first frame."""
    team = [
        {"id": f"agent{n}", "backend": {"type": "chatcompletion", "model": f"m{n}",
                                        "base_url": base_url}}
        for n in range(agents)
    ]  # fmt: skip
    config: dict[str, object] = {"agents": team}
    argv = [sys.executable, "-m", "massgen", "--config", "team.yaml", "--no-logs"]
    if display == "none":
        config["ui"] = {"display_type": "silent"}
    else:
        argv += ["--display", display]
    (work / "team.yaml").write_text(yaml.safe_dump(config))
    first = FIRST_SHOWN.get(display)
    term = Terminal([*argv, QUESTION], work, (first or b"\0", APP_DONE))
    first_wall, first_cpu = term.wait_for(first) if first else (0.0, 0.0)
    if not whole:
        os.kill(term.pid, 9)
        term.finish()
        return Sample(first_wall, first_cpu, 0.0, 0.0)
    if display == "tui":
        term.wait_for(APP_DONE)
        term.press(b"q")
    wall, cpu = term.finish()
    return Sample(first_wall, first_cpu, cpu, wall)


def compiled() -> None:
    """Bytecode for this checkout's `massgen`, as an install leaves it (pip compiles): where
    PYTHONDONTWRITEBYTECODE is set (here it is) every start would compile the modules the
    first frame needs again (0.03 CPU s of 0.3 here), which no user's start pays."""
    import compileall

    compileall.compile_dir(ROOT / "massgen", quiet=1)


def collect(runs: int) -> dict[str, dict[str, list[Sample]]]:
    found: dict[str, dict[str, list[Sample]]] = {"first": {}, "stream": {}}
    compiled()
    with tempfile.TemporaryDirectory(prefix="massgen-bench-tui-") as scratch:
        work = Path(scratch)
        (work / "home").mkdir()
        os.environ["HOME"] = str(work / "home")
        with FakeProvider(Policy(0)) as fake:
            for display in ("tui", "live"):
                _say(f"first frame, {display}")
                found["first"][display] = [
                    measure(display, fake.base_url, 3, work, whole=False) for _ in range(runs)
                ]
        with FakeProvider(Streaming(WORDS), tokens_per_second=RATE) as fake:
            for display in ("tui", "live", "none"):
                _say(f"a run of {STREAMERS} agents streaming {RATE} words/s, {display}")
                found["stream"][display] = [
                    measure(display, fake.base_url, STREAMERS, work, whole=True)
                    for _ in range(runs)
                ]
    return found


def render(found: dict[str, dict[str, list[Sample]]], runs: int, note: str) -> str:
    first, stream = found["first"], found["stream"]
    streaming = ROUNDS * WORDS / RATE  # seconds the agents stream, at the provider's pace
    base = statistics.median(s.total_cpu for s in stream["none"])
    rows = []
    for display in ("tui", "live"):
        wall = statistics.median(s.first_wall for s in first[display])
        cpu = statistics.median(s.first_cpu for s in first[display])
        total = statistics.median(s.total_cpu for s in stream[display])
        run_wall = statistics.median(s.wall for s in stream[display])
        drawing = (total - base) / streaming
        rows.append(
            f"| `--display {display}` | {wall:.2f} s | {cpu:.2f} s | {total:.1f} s "
            f"({run_wall:.0f} s) | {drawing:.0%} |"
        )
    none_wall = statistics.median(s.wall for s in stream["none"])
    return "\n\n".join(
        [
            "## 19. The terminal app",
            f"Written by `python -m bench.tui` on {time.strftime('%Y-%m-%d')} (median of "
            f"{runs}; 1-minute load average {os.getloadavg()[0]:.2f} at the end). In a pty of "
            f"{SIZE[0]}x{SIZE[1]}. First frame: from spawning `massgen` (3 agents on the fake "
            "provider) to the first screen showing the run, in wall time and in the CPU "
            f"time the process used until then. Run: {STREAMERS} agents each stream "
            f"{ROUNDS} replies of {WORDS} words at {RATE} words a second ({streaming:g} s of "
            f"streaming); its CPU seconds (and wall time), against {base:.1f} s ({none_wall:.0f}"
            " s) for the same run with no view; drawing is the difference as a share of one "
            "core over the streaming time. Budget for the app: first frame ≤ 0.5 s, drawing "
            "≤ 30% of one core.",
            "| display | first frame | its CPU | run CPU (wall) | drawing |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows),
            note,
        ]
    ).rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tui", description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--print", action="store_true", help="print; don't write the doc")
    parser.add_argument("--note", default="", help="a paragraph after the table")
    args = parser.parse_args(argv)
    found = collect(args.runs)
    for kind, displays in found.items():
        for display, samples in displays.items():
            _say(f"{kind} {display}: " + "; ".join(
                f"{s.first_wall:.2f}s/{s.first_cpu:.2f}cpu run {s.total_cpu:.1f}cpu/{s.wall:.0f}s"
                for s in samples))  # fmt: skip
    section = render(found, args.runs, args.note)
    report.publish(section, BEGIN, END, quick=args.print)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
