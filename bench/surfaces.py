"""`python -m bench.surfaces`: what asking the team through another tool adds to a run.

One team of 3 on the fake provider (its own process, `bench.serve`, 0 ms latency), asked
the same question on three paths, one run at a time, the paths taking turns so that the
machine's other work weighs on each alike:

- in-process: `massgen.api.TeamRun(...).execute()` in this process;
- MCP: `massgen mcp` over stdio, through the official `mcp` client SDK (`call_tool` with a
  progress callback);
- Responses: `POST /v1/responses` with `stream=True`, through the official `openai` SDK,
  against `massgen serve` on loopback.

Each path is warmed up with one run first. Measured per run, from the call: the first
progress event (in-process: the first event that is a progress line, `RunStarted`; MCP:
the first progress notification; Responses: the first `reasoning_summary_text.delta`)
and the result (`execute()` returns; `call_tool` returns; `response.completed`).
Written into its section of `docs/benchmarks.md`; `--runs N` and `--print` for a look.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import report
from bench.proc import ROOT, FakeServer, free_port, wait_healthy
from bench.serving import percentile

BEGIN, END = "<!-- surfaces: begin -->", "<!-- surfaces: end -->"
TOKEN = "bench-surfaces-token"
AGENTS = 3
QUESTION = "What is the capital of France?"
BUDGET_MS = 20.0  # added p50, over in-process (issue #27)
PATHS = ("in-process", "MCP (stdio)", "Responses (HTTP)")


@dataclass(frozen=True, slots=True)
class Timing:
    first: float  # seconds to the first progress event
    result: float  # seconds to the result


Ask = Callable[[], Awaitable[Timing]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.surfaces")
    parser.add_argument("--runs", type=int, default=50, help="runs per path (default 50)")
    parser.add_argument("--print", action="store_true", help="print the section, do not write it")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    timings = measure(args.runs)
    section = render(args.runs, timings, (load_before, os.getloadavg()[0]))
    report.publish(section, BEGIN, END, quick=args.print)
    return 0


def measure(runs: int) -> dict[str, list[Timing]]:
    with tempfile.TemporaryDirectory(prefix="massgen-surfaces-") as scratch, FakeServer() as fake:
        folder = Path(scratch)
        (folder / "home").mkdir()
        _write_team(folder / "team.yaml", fake.base_url)
        return asyncio.run(_measure(folder, runs))


async def _measure(folder: Path, runs: int) -> dict[str, list[Timing]]:
    async with contextlib.AsyncExitStack() as stack:
        asks = {
            PATHS[0]: _in_process(folder),
            PATHS[1]: await stack.enter_async_context(_mcp(folder)),
            PATHS[2]: await stack.enter_async_context(_responses(folder)),
        }
        for ask in asks.values():
            await ask()  # warm: imports, connections, the first run's caches
        timings: dict[str, list[Timing]] = {name: [] for name in asks}
        for _ in range(runs):
            for name, ask in asks.items():
                timings[name].append(await ask())
        return timings


def _write_team(path: Path, base_url: str) -> None:
    backend = {"type": "chatcompletion", "base_url": base_url}
    agents = [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(AGENTS)]
    path.write_text(yaml.safe_dump({"agents": agents}))


def _env(folder: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MASSGEN_")}
    env.update(HOME=str(folder / "home"), PYTHONPATH=str(ROOT), **extra)
    return env


# --- the three paths -----------------------------------------------------------------------


def _in_process(folder: Path) -> Ask:
    os.environ["HOME"] = str(folder / "home")
    os.chdir(folder)  # logs and workspaces where the servers put theirs
    from massgen.api import TeamRun, load
    from massgen.mcp_server import progress

    loaded = load(str(folder / "team.yaml"))

    async def ask() -> Timing:
        started = time.perf_counter()
        first: list[float] = []

        def sink(event: object) -> None:
            if not first and progress.describe(event) is not None:  # type: ignore[arg-type]
                first.append(time.perf_counter() - started)

        result = await TeamRun(loaded, QUESTION, sinks=[sink]).execute()
        assert result.answer, "the in-process run had no answer"
        return Timing(first[0], time.perf_counter() - started)

    return ask


@contextlib.asynccontextmanager
async def _mcp(folder: Path) -> AsyncIterator[Ask]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "massgen", "mcp", "--config", "team.yaml"],
        cwd=folder,
        env=_env(folder),
    )
    with (folder / "mcp_stderr.txt").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, send),
            ClientSession(read, send) as client,
        ):
            await client.initialize()

            async def ask() -> Timing:
                started = time.perf_counter()
                first: list[float] = []

                async def on_progress(
                    progress: float, total: float | None, message: str | None
                ) -> None:
                    if not first:
                        first.append(time.perf_counter() - started)

                result = await client.call_tool(
                    "ask_team", {"question": QUESTION}, progress_callback=on_progress
                )
                assert not result.isError and first, f"the MCP run failed: {result.content}"
                return Timing(first[0], time.perf_counter() - started)

            yield ask


@contextlib.asynccontextmanager
async def _responses(folder: Path) -> AsyncIterator[Ask]:
    import openai

    port = free_port()
    argv = [sys.executable, "-m", "massgen", "serve", "--config", "team.yaml"]
    env = _env(folder, MASSGEN_SERVE_TOKEN=TOKEN)
    server = subprocess.Popen(
        [*argv, "--port", str(port)], cwd=folder, env=env, stdout=subprocess.DEVNULL
    )
    try:
        await asyncio.to_thread(wait_healthy, f"http://127.0.0.1:{port}/health")
        base = f"http://127.0.0.1:{port}/v1"
        async with openai.AsyncOpenAI(base_url=base, api_key=TOKEN, max_retries=0) as client:

            async def ask() -> Timing:
                started = time.perf_counter()
                first = result = None
                stream = await client.responses.create(model="massgen", input=QUESTION, stream=True)
                async for event in stream:
                    now = time.perf_counter() - started
                    if first is None and event.type == "response.reasoning_summary_text.delta":
                        first = now
                    elif event.type == "response.completed":
                        result = now
                assert first is not None and result is not None, "the stream had no answer"
                return Timing(first, result)

            yield ask
    finally:
        server.terminate()
        server.wait(timeout=30)


# --- the section ---------------------------------------------------------------------------


def added(timings: dict[str, list[Timing]], path: str, p: float, first: bool) -> float:
    """Milliseconds `path` adds over in-process at percentile `p`."""

    def ms(name: str) -> float:
        values = [t.first if first else t.result for t in timings[name]]
        return percentile(values, p) * 1000

    return ms(path) - ms(PATHS[0])


def render(runs: int, timings: dict[str, list[Timing]], load: tuple[float, float]) -> str:
    header = (
        "| ms | first progress p50 | p99 | result p50 | p99 | added p50 (first / result) "
        "| added p99 (first / result) |\n|---|---|---|---|---|---|---|"
    )
    rows = []
    for name, values in timings.items():
        cells = [
            f"{percentile([getattr(t, kind) for t in values], p) * 1000:.1f}"
            for kind in ("first", "result")
            for p in (50, 99)
        ]
        if name == PATHS[0]:
            cells += ["", ""]
        else:
            cells += [
                f"{added(timings, name, p, True):+.1f} / {added(timings, name, p, False):+.1f}"
                for p in (50, 99)
            ]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    verdicts = [
        f"{name}: {'within' if worst <= BUDGET_MS else 'over'} the budget "
        f"({worst:+.1f} ms, the larger of first progress and result)"
        for name in PATHS[1:]
        for worst in [max(added(timings, name, 50, True), added(timings, name, 50, False))]
    ]
    return "\n\n".join(
        [
            "## 17. The team inside other tools (`massgen mcp`, `/v1/responses`)",
            f"Written by `python -m bench.surfaces` on {time.strftime('%Y-%m-%d')}: {runs} runs "
            f"per path of a team of {AGENTS} on the fake provider (its own process, 0 ms "
            "latency), one run at a time, the three paths taking turns, each warmed up with "
            "one run first: in-process `TeamRun.execute()`; `ask_team` through the official "
            "`mcp` client over stdio to `massgen mcp`; `responses.create(stream=True)` "
            "through the official `openai` SDK to `massgen serve` on loopback. First "
            "progress: the first progress event (in-process: `RunStarted` at the sink; MCP: "
            "the first progress notification; Responses: the first "
            "`response.reasoning_summary_text.delta`). Result: `execute()` / `call_tool` "
            f"returns, `response.completed` arrives. p99 over {runs} runs is the slowest run "
            "(nearest rank). Every run writes its logs, on every path. 1-minute load average "
            f"{load[0]:.2f} before, {load[1]:.2f} after, on the 2-core machine above, shared "
            "with other work (other sessions' tests and a model run) while this ran.",
            header + "\n" + "\n".join(rows),
            f"Budget: at most {BUDGET_MS:g} ms added at p50 over in-process. "
            + "; ".join(verdicts)
            + ".",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
