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

    from massgen import team
    from massgen.coordination.orchestrator import Orchestrator
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
    (member,) = team.build(loaded.config, env={})
    member = dataclasses.replace(member, toolbox=InProcessTools().add("lookup", lookup))
    try:
        await Orchestrator([member], loaded.config.orchestrator, emit=timeline).run(QUESTION)
    finally:
        await member.backend.aclose()
    started, finished = marks["tool_call_started"], marks["tool_call_finished"]
    return ToolTrip(usage[0] - marks["agent_started"], finished - started, usage[1] - started)
