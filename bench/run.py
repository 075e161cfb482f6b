"""`python -m bench`: measure massgen against the loopback fake provider and write
`docs/benchmarks.md`.

    python -m bench                 # 5 runs of everything, a minute or two on 2 cores
    python -m bench --quick         # one run of everything, printed instead of written
    MASSGEN_BENCH_OTHER_CLI=/path/to/other/bin/massgen python -m bench
                                    # the same command workloads against another CLI too
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench import (
    commands,
    doc,
    inproc,
    journal,
    local,
    report,
    workspace,
)
from bench.commands import Cli, TeamSample, Workdir
from bench.proc import ROOT, Sample

# This module's part of docs/benchmarks.md (§1-9, at the top); a rerun replaces only it,
# so the other modules' sections and the notes between them stay.
BEGIN, END = "<!-- core: begin -->", "<!-- core: end -->"

OTHER_ENV = "MASSGEN_BENCH_OTHER_CLI"
GROWTH_SIZES = (2, 3, 5, 8)  # at 0 ms; the 3-agent runs double as the overhead benchmark
SCALING_SIZES = (1, 3, 8, 32)
LATENCY = 0.3
_say = report.progress("bench")


@dataclass(frozen=True, slots=True)
class CliResults:
    cli: Cli
    runs: int
    cold: dict[str, list[Sample]]
    instant: dict[int, list[TeamSample]]  # team runs at 0 ms latency
    slow: dict[int, list[TeamSample]] | None  # team runs at LATENCY, for the comparison


@dataclass(frozen=True, slots=True)
class Results:
    runs: int
    latency: float
    ours: CliResults
    scaling: dict[int, list[inproc.ScalingSample]]
    events: dict[str, dict[str, list[inproc.Throughput]]]
    stream_words: int
    backend_import: float  # seconds a fresh process spends importing the openai backend
    other: CliResults | None
    load: tuple[float, float]  # 1-minute load average before and after
    tools: list[inproc.ToolTrip] | None = None
    mcp: list[inproc.McpStartup] | None = None
    workspace: workspace.WorkspaceCost | None = None
    journal: journal.JournalCost | None = None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    runs = 1 if args.quick else args.runs
    other = _other_cli(args.other)
    results = collect(runs, other, args.other_runs or runs, 300 if args.quick else 2000)
    text = doc.render(results)
    if args.quick and args.out is None:
        print(text)
        return 0
    out = Path(args.out or ROOT / "docs" / "benchmarks.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    local.write(out, text.rstrip(), BEGIN, END, first_at_top=True)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (default 5)")
    parser.add_argument("--quick", action="store_true", help="one run each; print, don't write")
    parser.add_argument("--out", help="where to write (default docs/benchmarks.md)")
    parser.add_argument("--other", help=f"another orchestrator's CLI (default ${OTHER_ENV})")
    parser.add_argument("--other-runs", type=int, help="runs for the other CLI (default --runs)")
    return parser


def collect(runs: int, other: Cli | None, other_runs: int, words: int) -> Results:
    load_before = os.getloadavg()[0]
    _say("importing the Chat Completions backend")
    backend_import = commands.import_cost("massgen.backends.chat_completions", "massgen.api", runs)
    with tempfile.TemporaryDirectory(prefix="massgen-bench-") as scratch:
        work = Workdir(Path(scratch))
        ours = _measure_cli(_our_cli(), work, runs, compare=other is not None)
        _say(f"parallel scaling in process: {SCALING_SIZES} agents at {LATENCY:g} s")
        scaling = inproc.scaling(list(SCALING_SIZES), LATENCY, runs)
        _say(f"event throughput: {words} streamed words per reply")
        events = inproc.event_throughput(words, runs)
        _say("one tool round trip with an in-process tool")
        tools = inproc.tool_round_trip(runs)
        _say("MCP start-up: 3 agents x 2 stdio servers, a 2-turn session and 2 separate runs")
        mcp = inproc.mcp_startup(runs)
        _say("workspace snapshots: 3 agents over 1,000 files / 50 MB")
        snapshots = workspace.snapshot_cost()
        _say("journal: a decided event (fsynced) against a text delta")
        journal_cost = journal.journal_cost(where=Path(scratch))
        theirs = _measure_cli(other, work, other_runs, compare=True) if other else None
    return Results(
        runs,
        LATENCY,
        ours,
        scaling,
        events,
        words,
        backend_import,
        theirs,
        (load_before, os.getloadavg()[0]),
        tools,
        mcp,
        snapshots,
        journal_cost,
    )


def _measure_cli(cli: Cli, work: Workdir, runs: int, *, compare: bool) -> CliResults:
    _say(f"{cli.name}: cold start")
    cold = commands.cold_start(cli, work, runs)
    _say(f"{cli.name}: team runs at 0 ms, {GROWTH_SIZES} agents")
    instant = commands.team_runs(cli, work, GROWTH_SIZES, 0.0, runs)
    slow = None
    if compare:
        _say(f"{cli.name}: team runs at {LATENCY:g} s, {SCALING_SIZES} agents")
        slow = commands.team_runs(cli, work, SCALING_SIZES, LATENCY, runs)
    return CliResults(cli, runs, cold, instant, slow)


def _our_cli() -> Cli:
    script = Path(sys.executable).parent / "massgen"
    argv = (str(script),) if script.exists() else (sys.executable, "-m", "massgen")
    return Cli("this massgen", argv, "@examples/three_agents", strict=True)


def _other_cli(path: str | None) -> Cli | None:
    path = path or os.environ.get(OTHER_ENV)
    if not path:
        return None
    path = os.path.abspath(shutil.which(path) or path)  # commands run in a scratch directory
    return Cli(_other_name(path), (path,))


def _other_name(path: str) -> str:
    """What `--version` says, else the version of a `massgen` installed beside it."""
    beside = str(Path(path).parent / "python")
    asked = (
        [path, "--version"],
        [
            beside,
            "-c",
            "from importlib.metadata import version; print('massgen', version('massgen'))",
        ],
    )
    for argv in asked:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        if done.returncode == 0 and lines:
            return lines[-1]
    return Path(path).name


if __name__ == "__main__":
    raise SystemExit(main())
