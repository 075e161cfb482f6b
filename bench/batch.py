"""`python -m bench.batch`: what `massgen batch` costs on top of the team runs it makes, and
how its throughput grows with `--concurrency`. Written into the batch section of
`docs/benchmarks.md` (between its markers; `python -m bench` keeps the section).

    python -m bench.batch            # 200 questions at 0 ms; 64 at 300 ms per concurrency
    python -m bench.batch --quick    # 20 and 16; printed, not written

Overhead: the same questions through `massgen batch --concurrency 1` (in this process:
tasks, manifest, the one writer with fsync, scoring, summary) and one `TeamRun` at a time
with the same log directories, at 0 ms latency. Throughput: questions per second at
concurrency 1, 8 and 32 at 300 ms latency, with the default provider bound (8) and with
it raised above the concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

from bench import report
from bench.proc import FakeServer
from massgen.api import TeamRun, load
from massgen.batch import cli
from massgen.batch.tasks import load_tasks
from massgen.batch.work import run_dir

BEGIN, END = "<!-- batch: begin -->", "<!-- batch: end -->"
AGENTS = 3
ROUNDS = 2  # overhead: the faster of two runs each (the machine is shared)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.batch")
    parser.add_argument("--quick", action="store_true", help="fewer questions; print")
    args = parser.parse_args(argv)
    overhead_n, throughput_n = (20, 16) if args.quick else (200, 64)
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # team runs put .massgen/ in the working directory
        overhead = _overhead(Path(scratch), overhead_n)
        throughput = _throughput(Path(scratch), throughput_n)
    text = _render(overhead_n, overhead, throughput_n, throughput)
    report.publish(text, BEGIN, END, quick=args.quick)
    return 0


def _files(where: Path, base_url: str, count: int) -> tuple[Path, Path]:
    where.mkdir(parents=True, exist_ok=True)
    backend = {"type": "chatcompletion", "base_url": base_url}
    team = {
        "agents": [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(AGENTS)]
    }
    config = where / "team.json"
    config.write_text(json.dumps(team), encoding="utf-8")
    tasks = where / "tasks.jsonl"
    with tasks.open("w", encoding="utf-8") as out:
        for i in range(count):
            row = {"id": f"q{i}", "question": f"Question {i}: what is {i} plus one?"}
            out.write(json.dumps({**row, "answer": str(i + 1)}) + "\n")
    return config, tasks


def _batch(config: Path, tasks: Path, out: Path, *flags: str) -> float:
    argv = [str(tasks), "--config", str(config), "--out", str(out), *flags]
    started = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    if code != 0:
        raise RuntimeError(f"massgen batch exited {code}")
    return time.monotonic() - started


def _one_at_a_time(config: Path, tasks: Path, out: Path) -> float:
    loaded = load(str(config))

    async def every() -> None:
        for task in load_tasks(str(tasks)):
            await TeamRun(loaded, task.question, log_dir=run_dir(out, task.id) / "team").execute()

    started = time.monotonic()
    asyncio.run(every())
    return time.monotonic() - started


def _overhead(scratch: Path, count: int) -> dict[str, float]:
    with FakeServer(latency=0.0) as fake:
        config, tasks = _files(scratch / "overhead", fake.base_url, count)
        _one_at_a_time(config, tasks, scratch / "warm")  # imports, first connections
        alone, batch = [], []
        for turn in range(ROUNDS):  # interleaved, so a busy spell hits both alike
            alone.append(_one_at_a_time(config, tasks, scratch / f"alone{turn}"))
            fake.take()
            batch.append(_batch(config, tasks, scratch / f"batch{turn}", "--concurrency", "1"))
            calls = fake.take().calls
    return {"alone": min(alone), "batch": min(batch), "calls": calls}


def _throughput(scratch: Path, count: int) -> list[tuple[int, int, float]]:
    runs = [(1, 8), (8, 8), (32, 8), (32, 64)]
    found = []
    with FakeServer(latency=0.3) as fake:
        config, tasks = _files(scratch / "throughput", fake.base_url, count)
        for concurrency, bound in runs:
            out = scratch / f"c{concurrency}-p{bound}"
            flags = ["--concurrency", str(concurrency), "--provider-concurrency", str(bound)]
            found.append((concurrency, bound, _batch(config, tasks, out, *flags)))
    return found


def _render(
    overhead_n: int,
    overhead: dict[str, float],
    throughput_n: int,
    throughput: list[tuple[int, int, float]],
) -> str:
    alone, batch = overhead["alone"] / overhead_n, overhead["batch"] / overhead_n
    base = throughput[0][2]
    rows = [
        [
            str(c),
            str(p),
            report.seconds(wall),
            f"{throughput_n / wall:.2f}",
            report.ratio(base / wall),
            f"{min(c, p)}x",
        ]
        for c, p, wall in throughput
    ]
    load = os.getloadavg()[0]
    return "\n\n".join(
        [
            "## 14. Batch",
            f"Written by `python -m bench.batch` on {time.strftime('%Y-%m-%d')} (1-minute load "
            f"average {load:.2f} at the end). A team of {AGENTS} `chatcompletion` agents on the "
            "fake provider (`bench/serve.py`, its own process), each question a full team run "
            "with its log directory.",
            f"### Overhead per question ({overhead_n} questions, 0 ms latency, "
            f"{overhead['calls']:,} LLM calls; the faster of {ROUNDS} interleaved runs each)",
            report.table(
                ["", "seconds per question"],
                [
                    ["one `TeamRun` at a time, in-process, same log dirs", report.seconds(alone)],
                    ["`massgen batch --concurrency 1`, in-process", report.seconds(batch)],
                    ["**batch overhead per question**", report.seconds(batch - alone)],
                ],
            ),
            "The batch adds reading the tasks, the manifest, one fsynced line per result, "
            "scoring and the summary.",
            f"### Throughput ({throughput_n} questions, 300 ms per call)",
            report.table(
                [
                    "--concurrency",
                    "--provider-concurrency",
                    "wall",
                    "questions/s",
                    "vs concurrency 1",
                    "ideal",
                ],
                rows,
            ),
            "Every job calls the one fake provider, so the provider bound caps the questions "
            "in flight: 32 at the default bound of 8 runs like 8. **Ideal** is the smaller of "
            "the two. Below it, the driver's own CPU is the limit: a question costs "
            f"{report.seconds(alone)} of this process at 0 ms (above), a ceiling of "
            f"{1 / alone:.1f} questions/s on one free core, and with the load average at "
            f"{load:.1f} on {os.cpu_count()} cores this process got a fraction of one. "
            "`--executor ray` runs the team runs in other processes (not measured here).",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
