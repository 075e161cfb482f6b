"""Workloads through massgen's Python API, where the event stream shows what happens when:
parallel scaling and event throughput. The fake server runs in its own process."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from bench.commands import QUESTION, team_config
from bench.proc import FakeServer
from massgen import api
from massgen.core import events as ev
from massgen.ui.live import LiveView
from massgen.ui.plain import PlainView

Consumer = Callable[[ev.AnyEvent], None]


def _live_view() -> LiveView:
    # A 120x40 colour terminal that writes to memory: every frame is rendered and encoded.
    console = Console(file=io.StringIO(), force_terminal=True, width=120, height=40)
    return LiveView(console)


# What the event stream feeds.
CONSUMERS: dict[str, Callable[[], Consumer]] = {
    "no-op": lambda: lambda event: None,
    "plain view (to memory)": lambda: PlainView(io.StringIO()),
    "live view (to memory, 120x40)": _live_view,
}


@dataclass(frozen=True, slots=True)
class ScalingSample:
    wall: float  # the whole run: building the team, answers, votes, presentation
    first_round: float  # run start until every agent's first answer is published
    calls: int
    waves: int  # sequential rounds of calls seen by the server


def scaling(sizes: list[int], latency: float, runs: int) -> dict[int, list[ScalingSample]]:
    results: dict[int, list[ScalingSample]] = {}
    with FakeServer(latency) as server:
        asyncio.run(_one_run(server.base_url, 2))  # warm imports and the server
        for size in sizes:
            results[size] = []
            for _ in range(runs):
                server.take()
                wall, first_round = asyncio.run(_one_run(server.base_url, size))
                seen = server.take()
                results[size].append(
                    ScalingSample(wall, first_round, seen.calls, seen.waves(latency))
                )
    return results


async def _one_run(base_url: str, size: int) -> tuple[float, float]:
    started: list[float] = []
    answered: dict[str, float] = {}

    def timeline(event: ev.AnyEvent) -> None:
        if isinstance(event, ev.RunStarted):
            started.append(time.perf_counter())
        elif isinstance(event, ev.AnswerPublished):
            answered.setdefault(event.agent, time.perf_counter())

    turn = api.TeamRun(
        api.load(team_config(base_url, size)), QUESTION, sinks=[timeline], logs=False
    )
    start = time.perf_counter()
    result = await turn.execute()
    wall = time.perf_counter() - start
    if not result.ok or len(answered) != size:
        raise RuntimeError(f"{size}-agent run ended {result.status}: {result.reason}")
    return wall, max(answered.values()) - started[0]


@dataclass(frozen=True, slots=True)
class Throughput:
    events: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.events / self.seconds


def event_throughput(words: int, runs: int) -> dict[str, dict[str, list[Throughput]]]:
    """Events per second: end to end through `massgen.stream` (server, SDK, orchestrator,
    consumer), and the consumer alone, replaying the recorded events."""
    end_to_end: dict[str, list[Throughput]] = {name: [] for name in CONSUMERS}
    alone: dict[str, list[Throughput]] = {name: [] for name in CONSUMERS}
    with FakeServer(0.0, words) as server:
        config = team_config(server.base_url, 3)
        for _ in range(runs):
            for name, make in CONSUMERS.items():
                recorded, sample = asyncio.run(_stream(config, make()))
                end_to_end[name].append(sample)
                alone[name].append(_replay(recorded, make()))
    return {"end to end": end_to_end, "consumer alone": alone}


async def _stream(config: dict, consumer: Consumer) -> tuple[list[ev.AnyEvent], Throughput]:
    recorded: list[ev.AnyEvent] = []
    start = time.perf_counter()
    async for event in api.stream(QUESTION, config, logs=False):
        consumer(event)
        recorded.append(event)
    return recorded, Throughput(len(recorded), time.perf_counter() - start)


def _replay(events: list[ev.AnyEvent], consumer: Consumer) -> Throughput:
    start = time.perf_counter()
    for event in events:
        consumer(event)
    return Throughput(len(events), time.perf_counter() - start)


# --- one tool round trip -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolTrip:
    model_call: float  # AgentStarted → the first reply's usage: one call to the fake
    dispatch: float  # ToolCallStarted → ToolCallFinished: the loop around an in-process tool
    round_trip: float  # ToolCallStarted → the next reply's usage: dispatch + the next call


def tool_round_trip(runs: int, per_run: int = 20) -> list[ToolTrip]:
    """A single agent that calls an in-process tool once, then answers; the fake provider
    (in this process: it is scripted per request) answers at once."""
    from massgen.testing import FakeProvider, Reply

    def policy(request: dict) -> Reply:
        if any(m["role"] == "tool" for m in request["messages"]):
            return Reply(tool_calls=[("new_answer", {"content": "The answer is 42."})])
        return Reply(tool_calls=[("lookup", {"key": "answer"})])

    samples = []
    with FakeProvider(policy) as fake:
        asyncio.run(_tool_run(fake.base_url))  # warm imports, the SDK and the server
        for _ in range(runs * per_run):
            samples.append(asyncio.run(_tool_run(fake.base_url)))
    return samples


async def _tool_run(base_url: str) -> ToolTrip:
    import dataclasses

    from massgen.coordination.orchestrator import Orchestrator
    from massgen.runs.members import build as build_members
    from massgen.testing.tools import InProcessTools

    async def lookup(key: str) -> str:
        return "42"

    marks: dict[str, float] = {}
    usage: list[float] = []

    def timeline(event: ev.AnyEvent) -> None:
        now = time.perf_counter()
        if isinstance(event, ev.AgentStarted | ev.ToolCallStarted | ev.ToolCallFinished):
            marks.setdefault(event.kind, now)
        elif isinstance(event, ev.UsageReported):
            usage.append(now)

    backend = {"type": "chatcompletion", "base_url": base_url, "api_key": "k", "model": "m"}
    loaded = api.load({"agents": [{"id": "solo", "backend": backend}]})
    (member,) = build_members(loaded.config, env={})
    member = dataclasses.replace(member, toolbox=InProcessTools().add("lookup", lookup))
    try:
        await Orchestrator([member], loaded.config.orchestrator, emit=timeline).run(QUESTION)
    finally:
        await member.backend.aclose()
    started, finished = marks["tool_call_started"], marks["tool_call_finished"]
    return ToolTrip(usage[0] - marks["agent_started"], finished - started, usage[1] - started)


# --- MCP start-up ------------------------------------------------------------------------

MCP_AGENTS, MCP_SERVERS, MCP_TURNS = 3, ("calc", "text"), 2
EXAMPLE_SERVER = "massgen.tools.example_server"


@dataclass(frozen=True, slots=True)
class McpStartup:
    """What MCP servers cost a user: `MCP_TURNS` turns of a 3-agent team with 2 stdio
    servers each, once as a chat session (servers opened once, handed to every turn) and
    once as separate runs (each run opens and closes its own)."""

    open_s: float  # the session's start-up: every server started and listed, concurrently
    close_s: float  # the session's end: every server closed
    session_turns: tuple[float, ...]  # each turn's wall time inside the session
    session_starts: int  # server processes started over the whole session
    run_turns: tuple[float, ...]  # each separate run's wall time, start-up included
    run_starts: int  # server processes started over the separate runs
    bare_turn: float  # the same turn without MCP servers


def mcp_startup(runs: int) -> list[McpStartup]:
    with FakeServer(0.0) as server:
        asyncio.run(_mcp_sample(server.base_url))  # warm imports, the SDK and the server
        return [asyncio.run(_mcp_sample(server.base_url)) for _ in range(runs)]


def mcp_team_config(base_url: str) -> dict:
    import sys

    config = team_config(base_url, MCP_AGENTS)
    servers = {
        name: {"command": sys.executable, "args": ["-m", EXAMPLE_SERVER]} for name in MCP_SERVERS
    }
    for agent in config["agents"]:
        agent["backend"]["mcp_servers"] = servers
    return config


async def _mcp_sample(base_url: str) -> McpStartup:
    from massgen.runs.toolboxes import open_tools

    loaded = api.load(mcp_team_config(base_url))
    seen: set[int] = set()

    def watch(event: ev.AnyEvent) -> None:
        if isinstance(event, ev.AgentStarted | ev.RunFinished):
            seen.update(server_pids())

    async def turn(**kwargs) -> float:
        start = time.perf_counter()
        result = await api.TeamRun(loaded, QUESTION, sinks=[watch], logs=False, **kwargs).execute()
        if not result.ok:
            raise RuntimeError(f"MCP run ended {result.status}: {result.reason}")
        return time.perf_counter() - start

    start = time.perf_counter()
    async with open_tools(loaded.config, log_dir=None) as boxes:
        open_s = time.perf_counter() - start
        seen.update(server_pids())
        session_turns = tuple([await turn(toolboxes=boxes) for _ in range(MCP_TURNS)])
        closing = time.perf_counter()
    close_s = time.perf_counter() - closing
    session_starts, seen = len(seen), set()
    run_turns = tuple([await turn() for _ in range(MCP_TURNS)])
    run_starts = len(seen)
    bare = api.load(team_config(base_url, MCP_AGENTS))
    start = time.perf_counter()
    await api.TeamRun(bare, QUESTION, logs=False).execute()
    bare_turn = time.perf_counter() - start
    if server_pids():
        raise RuntimeError(f"MCP servers outlived their run: {sorted(server_pids())}")
    return McpStartup(
        open_s, close_s, session_turns, session_starts, run_turns, run_starts, bare_turn
    )


def server_pids() -> set[int]:
    """Live children of this process running the example server (zombies are gone)."""
    import os
    from pathlib import Path

    me, found = str(os.getpid()), set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(") ", 1)[1].split()
            cmdline = (proc / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if stat[1] == me and stat[0] != "Z" and EXAMPLE_SERVER.encode() in cmdline:
            found.add(int(proc.name))
    return found
