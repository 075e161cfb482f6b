"""Processes: one measured command (wall time, peak RSS), and the fake server process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPAWN = ROOT / "bench" / "spawn.py"


@dataclass(frozen=True, slots=True)
class Sample:
    wall: float  # seconds from spawn to exit
    rss_mb: float  # peak resident set size of the process, MiB
    code: int
    output: str  # stdout and stderr together
    started: float  # time.monotonic() at spawn, comparable with the fake server's arrivals


def measure(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 300.0,
) -> Sample:
    """Run `argv` once, through `bench/spawn.py` (see there why)."""
    with tempfile.TemporaryDirectory() as scratch:
        report, output = Path(scratch, "report.json"), Path(scratch, "output")
        with output.open("wb") as out:
            subprocess.run(
                [sys.executable, str(SPAWN), str(report), str(timeout), *argv],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
                check=True,
            )
        result = json.loads(report.read_text())
        text = output.read_text(errors="replace")
    return Sample(result["wall"], result["rss_kb"] / 1024, result["code"], text, result["started"])


@dataclass(frozen=True, slots=True)
class Requests:
    """What the fake server saw: (arrival, model, prompt characters) per request."""

    seen: list[tuple[float, str, int]]

    @property
    def calls(self) -> int:
        return len(self.seen)

    @property
    def first_arrival(self) -> float:
        """time.monotonic() when the first request arrived."""
        return min(at for at, _, _ in self.seen)

    @property
    def prompt_chars(self) -> int:
        return sum(chars for _, _, chars in self.seen)

    def waves(self, latency: float) -> int:
        """Sequential rounds of calls: arrivals closer than half a latency are one round."""
        times = sorted(at for at, _, _ in self.seen)
        return (1 if times else 0) + sum(b - a > latency / 2 for a, b in pairwise(times))


class FakeServer:
    """`python -m bench.serve` for the length of a `with` block."""

    def __init__(self, latency: float = 0.0, words: int = 0) -> None:
        self.latency = latency
        self._argv = [
            sys.executable,
            "-m",
            "bench.serve",
            f"--latency={latency}",
            f"--words={words}",
        ]

    def __enter__(self) -> FakeServer:
        self._proc = subprocess.Popen(
            self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert self._proc.stdout is not None
        self.base_url = self._proc.stdout.readline().strip()
        if not self.base_url:
            raise RuntimeError("bench.serve did not start")
        return self

    def take(self) -> Requests:
        """The requests since the previous `take`."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("take\n")
        self._proc.stdin.flush()
        return Requests([tuple(item) for item in json.loads(self._proc.stdout.readline())])

    def __exit__(self, *_exc: object) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def free_port() -> int:
    """A loopback port free now (for a `massgen serve` the bench starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, timeout: float = 60.0) -> None:
    """Until `url` answers (a started `massgen serve`), for at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("massgen serve did not start")
