"""`python -m bench.serving`: what serving a team over HTTP costs, under load.

50 streamed Chat Completions requests at once, through the official openai SDK, against a
real `massgen serve` (its own process) on the fake provider (another process, `bench.serve`,
0.3 s latency, 20 streamed words before each action); then the same 50 runs in-process with
`massgen.api.TeamRun`, 50 at once in one event loop. Reports p50/p99 of time to the first
byte, to the first word of the final answer, and to the end. Written into the serving
section of `docs/benchmarks.md`; `--requests N` and `--print` for a quick look.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import report
from bench.proc import ROOT, FakeServer, free_port, wait_healthy

BEGIN, END = "<!-- serving: begin -->", "<!-- serving: end -->"
TOKEN = "bench-serving-token"
LATENCY, WORDS, AGENTS = 0.3, 20, 3
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@dataclass(frozen=True, slots=True)
class Timing:
    first_byte: float  # served: the first SSE chunk; in-process: the first event
    first_word: float  # the first word of the final answer
    total: float  # to `[DONE]` / the end of the run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serving")
    parser.add_argument("--requests", type=int, default=50, help="at once (default 50)")
    parser.add_argument("--print", action="store_true", help="print the section, do not write it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch, FakeServer(LATENCY, WORDS) as fake:
        folder = Path(scratch)
        (folder / "home").mkdir()
        team = _write_team(folder / "team.yaml", fake.base_url)
        served, served_cpu = _served(folder, team, args.requests)
        calls = fake.take().calls // (args.requests + 1)  # the warm-up run too
        inproc, inproc_cpu = asyncio.run(_in_process(folder, team, args.requests))
    cpu = (served_cpu / args.requests, inproc_cpu / args.requests)
    section = _section(args.requests, served, inproc, calls, cpu)
    report.publish(section, BEGIN, END, quick=args.print)
    return 0


def _write_team(path: Path, base_url: str) -> Path:
    backend = {"type": "chatcompletion", "base_url": base_url}
    agents = [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(AGENTS)]
    path.write_text(yaml.safe_dump({"agents": agents}))
    return path


# --- served ------------------------------------------------------------------------------


def _served(folder: Path, team: Path, requests: int) -> tuple[list[Timing], float]:
    """The timings, and the CPU seconds the server and the client spent on the batch."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MASSGEN_")}
    env.update(HOME=str(folder / "home"), PYTHONPATH=str(ROOT), MASSGEN_SERVE_TOKEN=TOKEN)
    argv = [sys.executable, "-m", "massgen", "serve", "--config", str(team), "--port", str(port)]
    argv += ["--max-concurrent", str(requests)]
    server = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/health")
        return asyncio.run(_streamed(f"http://127.0.0.1:{port}/v1", requests, server.pid))
    finally:
        server.terminate()
        server.wait(timeout=30)


async def _streamed(base_url: str, requests: int, pid: int) -> tuple[list[Timing], float]:
    import httpx
    import openai

    limits = httpx.Limits(max_connections=requests + 10)
    async with openai.AsyncOpenAI(
        base_url=base_url,
        api_key=TOKEN,
        max_retries=0,
        http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=300),
    ) as client:
        await _one_stream(client, time.perf_counter())  # warm: the first run imports the SDK
        cpu = _cpu_seconds(pid) + time.process_time()
        started = time.perf_counter()  # one start for all: queueing counts
        timings = await asyncio.gather(*(_one_stream(client, started) for _ in range(requests)))
        return list(timings), _cpu_seconds(pid) + time.process_time() - cpu


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _one_stream(client: object, started: float) -> Timing:
    first_byte = first_word = None
    stream = await client.chat.completions.create(  # type: ignore[attr-defined]
        model="massgen", messages=QUESTION, stream=True
    )
    async for chunk in stream:
        now = time.perf_counter() - started
        first_byte = first_byte if first_byte is not None else now
        if first_word is None and chunk.choices and chunk.choices[0].delta.content:
            first_word = now
    total = time.perf_counter() - started
    assert first_byte is not None and first_word is not None, "the stream had no answer"
    return Timing(first_byte, first_word, total)


# --- in-process --------------------------------------------------------------------------


async def _in_process(folder: Path, team: Path, requests: int) -> tuple[list[Timing], float]:
    os.environ["HOME"] = str(folder / "home")
    os.chdir(folder)
    from massgen.api import TeamRun, load

    loaded = load(str(team))

    async def one(started: float) -> Timing:
        marks: dict[str, float] = {}

        def sink(event: object) -> None:
            kind = getattr(event, "kind", "")
            marks.setdefault("first", time.perf_counter() - started)
            if kind == "final_text":
                marks.setdefault("word", time.perf_counter() - started)

        await TeamRun(loaded, QUESTION[0]["content"], sinks=[sink]).execute()
        return Timing(marks["first"], marks["word"], time.perf_counter() - started)

    await one(time.perf_counter())  # warm, as the served side is
    cpu, started = time.process_time(), time.perf_counter()
    timings = await asyncio.gather(*(one(started) for _ in range(requests)))
    return list(timings), time.process_time() - cpu


# --- the section ---------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """Nearest rank: the smallest value with at least p% of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _row(name: str, served: list[float], inproc: list[float]) -> str:
    cells = []
    for p in (50, 99):
        s, i = percentile(served, p), percentile(inproc, p)
        cells += [f"{s * 1000:.0f}", f"{i * 1000:.0f}", f"{(s - i) * 1000:+.0f}"]
    return f"| {name} | " + " | ".join(cells) + " |"


def _section(
    requests: int, served: list[Timing], inproc: list[Timing], calls: int, cpu: tuple[float, float]
) -> str:
    load = os.getloadavg()[0]
    header = (
        "| ms | served p50 | in-process p50 | overhead p50 | served p99 | in-process p99 "
        "| overhead p99 |\n|---|---|---|---|---|---|---|"
    )
    rows = [
        _row("first byte", [t.first_byte for t in served], [t.first_byte for t in inproc]),
        _row(
            "first word of the answer",
            [t.first_word for t in served],
            [t.first_word for t in inproc],
        ),
        _row("whole run", [t.total for t in served], [t.total for t in inproc]),
    ]
    return "\n\n".join(
        [
            "## 13. Serving (`massgen serve`)",
            f"Written by `python -m bench.serving` on {time.strftime('%Y-%m-%d')}: {requests} "
            "streamed `/v1/chat/completions` requests at once through the openai SDK, against "
            f"`massgen serve --max-concurrent {requests}` in its own process, each a team of "
            f"{AGENTS} on the fake provider ({LATENCY} s latency, {WORDS} words streamed before "
            f"each action; {calls} provider calls per run), after one warm-up run; then the same "
            f"{requests} runs at once in-process (`TeamRun`, one event loop, warmed up too). 1-minute load average "
            f"{load:.2f} at the end, on the machine above.",
            header + "\n" + "\n".join(rows),
            f"CPU per run (the fake provider's excluded): served {cpu[0] * 1000:.0f} ms (server "
            f"process and openai client together), in-process {cpu[1] * 1000:.0f} ms.",
            "Every request starts at the same instant, so the times include waiting for the "
            "others. First byte, served: the role chunk, sent once the run has started; "
            "in-process: the run's first event. First word: the first `content` delta / "
            "`FinalTextDelta`. Serving adds the CPU above (the HTTP hop, SSE framing, the "
            "client parsing chunks); the rest of the wall-time difference, either way, is "
            "scheduling: served, the work is split over two processes (server and client), "
            "in-process it all runs in one event loop, and both share the cores with the fake "
            "provider and the machine's other jobs.",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
