"""Background subagents (`spawn_subagents(..., background=true)`, the predecessor's mode):
the call returns at once while the children run as tasks of the parent's run, on the real
openai SDK against the loopback fake provider. The agent reads them with `list_subagents`
and `wait_subagents`, is told in its next model call when one ends, and no child outlives
the run; their tokens are the run's."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from massgen.api import TeamRun
from massgen.core import events as ev
from massgen.core.effects import External, Write
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.record.journal import read_journal
from massgen.runs.loading import load
from massgen.runs.subagents.jobs import JobLimits, Jobs
from massgen.runs.subagents.tool import ChildOutcome, Limits, SubagentToolbox
from massgen.testing import FakeProvider, Fault, Reply

from .subagent_team import (
    cancel_once_asked,
    is_child,
    offered,
    predecessor_coordination,
    stalling_children,
    team,
    tool_results,
)

WATER = {"task": "Find the boiling point of water at sea level.", "subagent_id": "water"}


def _spawn(*tasks: dict) -> Reply:
    return Reply(tool_calls=[("spawn_subagents", {"tasks": list(tasks), "background": True})])


def _answer(text: str) -> Reply:
    return Reply(tool_calls=[("new_answer", {"content": text})])


def _spawns_water_then_answers(seen: Callable[[dict], None]) -> Callable[[dict], Reply]:
    """Spawns WATER in the background, then answers with what the spawn said; `seen` is
    shown every request first."""

    def policy(request: dict) -> Reply:
        seen(request)
        if not tool_results(request):
            return _spawn(WATER)
        return _answer(f"Got: {tool_results(request)[-1]}")

    return policy


def _others() -> list[asyncio.Task]:
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]


async def test_a_background_spawn_returns_at_once_and_wait_gives_the_answer(in_tmp: Path):
    release = threading.Event()  # the child answers only once the parent has seen it run
    seen: dict[str, dict] = {}

    def child(request: dict) -> Reply:
        if not tool_results(request):
            release.wait(10)
            note = {"path": "finding.md", "content": "water: 100 °C"}
            return Reply(tool_calls=[("write_file", note)])
        return _answer("water boils at 100 °C")

    def lead(request: dict) -> Reply:
        results = tool_results(request)
        if not results:
            return _spawn(WATER)
        last = json.loads(results[-1])
        if "mode" in last:  # the spawn's result, while the child waits for `release`
            seen["spawned"] = last
            return Reply(tool_calls=[("list_subagents", {})])
        if "timeout_seconds" in json.dumps(last) and "listed" not in seen:
            seen["listed"] = last
            release.set()
            return Reply(tool_calls=[("wait_subagents", {"timeout_seconds": 30})])
        seen["waited"] = last
        return _answer(f"Lead: {last['subagents'][0]['answer']}")

    def policy(request: dict) -> Reply:
        return child(request) if is_child(request) else lead(request)

    with FakeProvider(policy) as fake:
        result = await TeamRun(load(team(fake.base_url)), "How hot?").execute()

    assert result.ok, result.reason
    assert seen["spawned"]["subagents"] == [
        {"subagent_id": "water", "status": "running", "workspace": "subagents/water"}
    ]
    [listed] = seen["listed"]["subagents"]
    assert listed["status"] == "running" and listed["seconds_remaining"] > 0
    [waited] = seen["waited"]["subagents"]
    assert waited["status"] == "completed" and waited["answer"] == "water boils at 100 °C"
    assert result.answer == "Lead: water boils at 100 °C"
    final = result.log_dir / "final" / "workspace"
    assert (final / "subagents" / "water" / "finding.md").read_text() == "water: 100 °C"
    # The child's tokens are the run's, charged to the agent that spawned it.
    events = read_journal(result.log_dir / "events.jsonl")
    reported = [e for e in events if isinstance(e, ev.UsageReported)]
    assert len(reported) == 5  # the lead's 4 calls and its child's run
    assert result.usage["lead"].total_tokens == sum(e.usage.total_tokens for e in reported)


async def test_the_agent_is_told_when_a_background_child_finishes(in_tmp: Path):
    child_done = threading.Event()
    told: list[str] = []

    def lead(request: dict) -> Reply:
        results = tool_results(request)
        if not results:
            return _spawn(WATER)
        notes = [m["content"] for m in request["messages"][2:] if m["role"] == "user"]
        if len(results) == 1:  # its child runs meanwhile; it works on, never asks
            child_done.wait(10)
            return Reply(tool_calls=[("write_file", {"path": "plan.md", "content": "x"})])
        told.extend(notes)
        return _answer("Lead: done")

    def policy(request: dict) -> Reply:
        return _answer("water boils at 100 °C") if is_child(request) else lead(request)

    def sink(event: ev.AnyEvent) -> None:
        if isinstance(event, ev.SubagentFinished):
            child_done.set()

    with FakeProvider(policy) as fake:
        result = await TeamRun(load(team(fake.base_url)), "How hot?", sinks=[sink]).execute()

    assert result.ok, result.reason
    [note] = told
    assert note.startswith("Your background subagent 'water' has finished:")
    assert '"answer": "water boils at 100 °C"' in note


async def test_a_child_still_running_is_cancelled_when_the_parent_run_ends(in_tmp: Path):
    child_asked = threading.Event()

    def lead(request: dict) -> Reply:
        if not tool_results(request):
            return _spawn(WATER)
        child_asked.wait(10)  # the child is waiting on its provider now
        return _answer("Lead: answered without it")

    def policy(request: dict) -> Reply:
        if is_child(request) and not tool_results(request):  # it spends, then hangs
            return Reply(tool_calls=[("write_file", {"path": "half.md", "content": "½"})])
        if is_child(request):
            child_asked.set()
            return Reply(fault=Fault(stall_seconds=60))
        return lead(request)

    with FakeProvider(policy) as fake:
        started = time.monotonic()
        result = await TeamRun(load(team(fake.base_url)), "How hot?").execute()
        took = time.monotonic() - started

    assert result.ok and result.answer == "Lead: answered without it"
    assert took < 10
    assert _others() == []  # no child task outlives its run
    events = read_journal(result.log_dir / "events.jsonl")
    [finished] = [e for e in events if isinstance(e, ev.SubagentFinished)]
    assert finished.subagent == "water" and finished.outcome == "cancelled"
    # Its end is in the run's record, and what it spent in the run's usage.
    reported = [e for e in events if isinstance(e, ev.UsageReported)]
    assert len(reported) == 3  # the lead's 2 calls and its child's first
    assert result.usage["lead"].total_tokens == sum(e.usage.total_tokens for e in reported)
    child_status = json.loads(
        (result.log_dir / "subagents" / "lead" / "water" / "status.json").read_text()
    )
    assert child_status["status"] == "interrupted"


async def test_interrupting_the_parent_cancels_its_background_children(in_tmp: Path):
    child_asked = threading.Event()

    def lead(request: dict) -> Reply:
        if not tool_results(request):
            return _spawn(WATER, {"task": "And ethanol.", "subagent_id": "ethanol"})
        return Reply(fault=Fault(stall_seconds=60))  # the parent works on meanwhile

    with FakeProvider(stalling_children(child_asked, lead)) as fake:
        run = TeamRun(load(team(fake.base_url)), "Start and stop.")
        assert await cancel_once_asked(run, child_asked, settle=0.1) < 5
        assert _others() == []

    events = read_journal(run.log_dir / "events.jsonl")
    finished = [e for e in events if isinstance(e, ev.SubagentFinished)]
    assert sorted((e.subagent, e.outcome) for e in finished) == [
        ("ethanol", "cancelled"),
        ("water", "cancelled"),
    ]


async def test_with_background_off_the_tools_are_not_offered(in_tmp: Path):
    tools: list[set[str]] = []
    policy = _spawns_water_then_answers(lambda request: tools.append(offered(request)))
    with FakeProvider(policy) as fake:
        config = team(fake.base_url, background_subagents={"enabled": False})
        result = await TeamRun(load(config), "Try.").execute()

    assert "spawn_subagents" in tools[0]
    assert not tools[0] & {"list_subagents", "wait_subagents", "cancel_subagent"}
    assert "background subagents are off" in result.answer


# --- the toolbox alone ---------------------------------------------------------------


def _call(name: str, **arguments) -> ToolCall:
    return ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))


def _box(jobs: Jobs, gate: asyncio.Event, started: list[str]) -> SubagentToolbox:
    async def spawn(task, ctx, call_id):
        started.append(task.id)
        await gate.wait()
        return ChildOutcome(f"answer of {task.id}")

    return SubagentToolbox(spawn, Limits(timeout_seconds=30, max_concurrent=3), {}, jobs)


async def test_limits_refuse_extra_background_children(tmp_path: Path):
    jobs = Jobs(JobLimits(per_agent=2, per_run=3))
    gate, started = asyncio.Event(), []
    a, b = _box(jobs, gate, started), _box(jobs, gate, started)
    ctx_a, ctx_b = ToolContext(agent="a", workspace=tmp_path), ToolContext(agent="b")

    two = [{"task": "one"}, {"task": "two"}]
    ok = await a.call(_call("spawn_subagents", tasks=two, background=True), ctx_a)
    assert not ok.is_error, ok.content
    third = await a.call(_call("spawn_subagents", tasks=[{"task": "3"}], background=True), ctx_a)
    assert third.is_error and "background_subagents.max_per_agent" in third.content
    # Over the run: a third of b's would pass the run's bound of 3, whole calls refused.
    over = await b.call(_call("spawn_subagents", tasks=two, background=True), ctx_b)
    assert over.is_error and "background_subagents.max_per_run" in over.content
    fits = await b.call(_call("spawn_subagents", tasks=[{"task": "b1"}], background=True), ctx_b)
    assert not fits.is_error
    await asyncio.sleep(0)
    assert sorted(started) == ["subagent_1", "subagent_1", "subagent_2"]
    # An agent sees only its own; an unknown id is a clear error.
    listed = json.loads((await b.call(_call("list_subagents"), ctx_b)).content)
    assert [s["subagent_id"] for s in listed["subagents"]] == ["subagent_1"]
    unknown = await b.call(_call("wait_subagents", subagent_ids=["subagent_2"]), ctx_b)
    assert unknown.is_error and "no background subagent 'subagent_2'" in unknown.content
    # The final presentation may not start one.
    late = ToolContext(agent="a", phase="presentation")
    refused = await a.call(_call("spawn_subagents", tasks=[{"task": "x"}], background=True), late)
    assert refused.is_error and "spawn without background" in refused.content
    # A cancelled child frees its place.
    cancelled = await a.call(_call("cancel_subagent", subagent_id="subagent_1"), ctx_a)
    assert json.loads(cancelled.content)["subagents"][0]["status"] == "cancelled"
    assert jobs.alive("a") == 1
    gate.set()
    waited = json.loads((await a.call(_call("wait_subagents", timeout_seconds=5), ctx_a)).content)
    assert [(s["subagent_id"], s["status"]) for s in waited["subagents"]] == [
        ("subagent_1", "cancelled"),
        ("subagent_2", "completed"),
    ]
    assert waited["subagents"][1]["answer"] == "answer of subagent_2"
    assert jobs.notes("a") == ()  # the wait showed it: no note repeats it
    await jobs.aclose()
    assert _others() == []
    closed = await a.call(_call("spawn_subagents", tasks=[{"task": "x"}], background=True), ctx_a)
    assert closed.is_error and "the run is ending" in closed.content


async def test_a_wait_ends_at_its_timeout_with_the_child_still_running(tmp_path: Path):
    jobs = Jobs(JobLimits())
    gate, started = asyncio.Event(), []
    box = _box(jobs, gate, started)
    ctx = ToolContext(agent="a")
    await box.call(_call("spawn_subagents", tasks=[WATER], background=True), ctx)
    began = time.monotonic()
    result = await box.call(_call("wait_subagents", timeout_seconds=0.2), ctx)
    assert 0.15 < time.monotonic() - began < 2
    assert json.loads(result.content)["subagents"][0]["status"] == "running"
    assert jobs.notes("a") == ()  # nothing has ended
    gate.set()
    await jobs.wait(jobs.of("a", None), 5)
    [note] = jobs.notes("a")
    assert "'water' has finished" in note and "answer of water" in note
    assert jobs.notes("a") == ()  # told once
    await jobs.aclose()


def test_each_tool_declares_its_effects(tmp_path: Path):
    box = SubagentToolbox(lambda *a: None, Limits(), {}, Jobs(JobLimits()))  # type: ignore[arg-type]
    ctx = ToolContext(agent="a", workspace=tmp_path)
    spawn = _call("spawn_subagents", tasks=[WATER], background=True)
    assert box.effects(spawn, ctx) == (
        Write(tmp_path / "subagents" / "water"),
        External("massgen", "spawn_subagents"),
    )
    assert box.effects(_call("list_subagents"), ctx) == (
        External("massgen", "list_subagents", read_only=True),
    )
    assert box.effects(_call("wait_subagents", timeout_seconds=3), ctx) == (
        External("massgen", "wait_subagents", read_only=True),
    )
    assert box.effects(_call("cancel_subagent", subagent_id="water"), ctx) == (
        External("massgen", "cancel_subagent"),
    )
    with pytest.raises(ValueError, match="timeout_seconds"):
        box.effects(_call("wait_subagents", timeout_seconds=-1), ctx)
    names = [spec.name for spec in box.specs()]
    assert names == ["spawn_subagents", "list_subagents", "wait_subagents", "cancel_subagent"]
    assert "background" in box.specs()[0].parameters["properties"]


async def test_a_background_spawn_the_permission_engine_refuses_runs_nothing(in_tmp: Path):
    asked = []
    policy = _spawns_water_then_answers(lambda request: asked.append(is_child(request)))
    with FakeProvider(policy) as fake:
        config = team(fake.base_url)
        config["permissions"] = {"automation_default": "deny-all"}
        result = await TeamRun(load(config), "Try.").execute()

    assert "refused by the permission engine" in result.answer
    assert not any(asked)


def test_the_predecessors_background_key_loads_typed():
    background = predecessor_coordination(
        background_subagents={"enabled": False, "injection_strategy": "user_message"}
    ).background_subagents
    assert background.enabled is False and background.injection_strategy == "user_message"
    assert background.max_per_agent == 4 and background.max_per_run == 8
