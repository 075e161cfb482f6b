"""Workloads run as commands, so they apply to any orchestrator with a massgen-style CLI:
cold start, and full team runs against the fake server."""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bench.proc import FakeServer, Requests, Sample, measure

QUESTION = "What is the capital of France, and why did it become the capital?"


@dataclass(frozen=True, slots=True)
class Cli:
    name: str
    argv: tuple[str, ...]
    validate: str | None = None  # what `--validate` checks; None: the generated 3-agent file
    strict: bool = False  # a failed command is a bench error, not a result to report

    def run_argv(self, config: Path) -> list[str]:
        return [*self.argv, "--config", str(config), "--no-display", "--no-logs", QUESTION]


@dataclass(frozen=True, slots=True)
class TeamSample:
    process: Sample
    requests: Requests

    @property
    def to_first_call(self) -> float:
        """Startup as the run lives it: spawn until the first LLM request reaches the server
        (interpreter, package, config, provider SDK, clients)."""
        return self.requests.first_arrival - self.process.started

    @property
    def after_first_call(self) -> float:
        """The rest: coordination, presentation, output and exit."""
        return self.process.wall - self.to_first_call


class Workdir:
    """A scratch directory that stands in for cwd and HOME, so neither CLI reads the
    user's .env or settings, or leaves logs behind."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "home").mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(root / "home"),
            "OPENAI_API_KEY": "bench-key",
            "NO_COLOR": "1",
            "PYTHONWARNINGS": "ignore",
        }

    def team_config(self, base_url: str, size: int) -> Path:
        # JSON is valid YAML, and every massgen-style loader reads a .yaml file.
        path = self.root / f"team{size}.yaml"
        path.write_text(json.dumps(team_config(base_url, size), indent=2), encoding="utf-8")
        return path

    def measure(self, cli: Cli, argv: list[str], timeout: float = 300.0) -> Sample:
        sample = measure(argv, env=self.env, cwd=self.root, timeout=timeout)
        if cli.strict and sample.code != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {sample.code}:\n{sample.output[-2000:]}")
        return sample


def team_config(base_url: str, size: int) -> dict:
    """`size` agents on one server, each with its own model name so their answers differ."""
    agents = [
        {
            "id": f"a{i}",
            "backend": {"type": "chatcompletion", "base_url": base_url, "model": f"a{i}"},
        }
        for i in range(1, size + 1)
    ]
    return {"agents": agents}


def floor_argv() -> list[str]:
    return [sys.executable, "-c", "pass"]


def import_cost(module: str, after: str, runs: int) -> float:
    """Median seconds a fresh process adds by importing `module` once `after` is imported."""
    with_it = [sys.executable, "-c", f"import {after}, {module}"]
    without = [sys.executable, "-c", f"import {after}"]
    pairs = [(measure(with_it).wall, measure(without).wall) for _ in range(runs)]
    return statistics.median(a for a, _ in pairs) - statistics.median(b for _, b in pairs)


def cold_start(cli: Cli, work: Workdir, runs: int) -> dict[str, list[Sample]]:
    """The floor (`python -c pass`), `--help` and `--validate`, each in a fresh process.
    Interleaved, so a change in the machine's load during the runs hits all three alike."""
    validate = cli.validate or str(work.team_config("http://127.0.0.1:9/v1", 3))
    commands = {
        "floor": floor_argv(),
        "--help": [*cli.argv, "--help"],
        "--validate": [*cli.argv, "--validate", validate],
    }
    samples: dict[str, list[Sample]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, argv in commands.items():
            samples[label].append(work.measure(cli, argv))
    return samples


def team_runs(
    cli: Cli, work: Workdir, sizes: Iterable[int], latency: float, runs: int
) -> dict[int, list[TeamSample]]:
    """Full runs (answers, votes, presentation) of teams of each size, `runs` times each."""
    results: dict[int, list[TeamSample]] = {}
    with FakeServer(latency) as server:
        for size in sizes:
            config = work.team_config(server.base_url, size)
            samples = []
            for _ in range(runs):
                server.take()
                process = work.measure(cli, cli.run_argv(config))
                samples.append(TeamSample(process, server.take()))
            results[size] = samples
    return results


def failures(samples: Iterable[Sample | TeamSample]) -> list[str]:
    """The tail of each failed run's output, for the report."""
    found = []
    for sample in samples:
        process = sample.process if isinstance(sample, TeamSample) else sample
        if process.code != 0:
            found.append(f"exit {process.code}: {process.output[-600:]}")
    return found
