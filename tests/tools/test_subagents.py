"""Subagents (`coordination.enable_subagents`): `spawn_subagents` runs each task as a child
team run on the real openai SDK against the loopback fake provider. The answers come back
in the tool result, bounded in number, concurrency and time; children work in the parent
agent's workspace, get no spawn tool of their own, and end with the parent."""

from __future__ import annotations

import json
import re
import threading
import time
from io import StringIO
from pathlib import Path

import pytest

from massgen.api import TeamRun
from massgen.config import config_from_dict
from massgen.core import events as ev
from massgen.core.effects import External, Write
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.record.journal import read_journal
from massgen.runs.loading import load
from massgen.runs.subagents import child_config
from massgen.runs.subagents.tool import (
    MAX_TASKS,
    ChildOutcome,
    ChildTask,
    Limits,
    SubagentToolbox,
)
from massgen.testing import FakeProvider, Fault, Reply
from massgen.ui.plain import PlainView

from .subagent_team import (
    cancel_once_asked,
    is_child,
    offered,
    predecessor_coordination,
    stalling_children,
    team,
    tool_results,
)

TASKS = [
    {"task": "Find the boiling point of water at sea level.", "subagent_id": "water"},
    {"task": "Find the boiling point of ethanol at sea level.", "subagent_id": "ethanol"},
]
FACTS = {"water": "100 °C", "ethanol": "78.37 °C"}


def _task_of(request: dict) -> str:
    return request["messages"][1]["content"]


def child_answer(request: dict) -> Reply:
    """A subagent: notes its finding in its workspace, then answers with it."""
    name = "ethanol" if "ethanol" in _task_of(request) else "water"
    if not tool_results(request):
        note = {"path": "finding.md", "content": f"{name}: {FACTS[name]}"}
        return Reply(tool_calls=[("write_file", note)])
    return Reply(tool_calls=[("new_answer", {"content": f"{name} boils at {FACTS[name]}"})])


def parent(tasks: list[dict]):
    """The spawning agent: hands out `tasks`, then answers with what came back."""

    def policy(request: dict) -> Reply:
        results = tool_results(request)
        if not results:
            return Reply(tool_calls=[("spawn_subagents", {"tasks": tasks})])
        reports = json.loads(results[-1])["results"]
        said = "; ".join(f"{r['subagent_id']}={r['status']}:{r['answer']}" for r in reports)
        return Reply(tool_calls=[("new_answer", {"content": f"Summary: {said}"})])

    return policy


async def test_two_subagents_answer_and_the_parent_uses_both(in_tmp: Path):
    requests: list[dict] = []

    def policy(request: dict) -> Reply:
        requests.append(request)
        return child_answer(request) if is_child(request) else parent(TASKS)(request)

    out = StringIO()
    with FakeProvider(policy) as fake:
        run = TeamRun(
            load(team(fake.base_url)), "Compare the boiling points.", sinks=[PlainView(out)]
        )
        result = await run.execute()

    assert result.ok, result.reason
    assert "water=completed:water boils at 100 °C" in result.answer
    assert "ethanol=completed:ethanol boils at 78.37 °C" in result.answer
    # No nesting: the parent is offered the tool, its children are not.
    parents = [r for r in requests if not is_child(r)]
    children = [r for r in requests if is_child(r)]
    assert all("spawn_subagents" in offered(r) for r in parents)
    assert children and all("spawn_subagents" not in offered(r) for r in children)
    # Each child worked in its own directory of the parent's workspace, so its files are
    # part of the parent's answer (and the final workspace).
    final = result.log_dir / "final" / "workspace"
    assert (final / "subagents" / "water" / "finding.md").read_text() == "water: 100 °C"
    assert (final / "subagents" / "ethanol" / "finding.md").read_text() == "ethanol: 78.37 °C"
    # The parent's log has a summary of each child, and each child a log of its own.
    events = read_journal(result.log_dir / "events.jsonl")
    finished = [e for e in events if isinstance(e, ev.SubagentFinished)]
    assert sorted((e.subagent, e.outcome) for e in finished) == [
        ("ethanol", "completed"),
        ("water", "completed"),
    ]
    assert (result.log_dir / "subagents" / "lead" / "water" / "events.jsonl").exists()
    table = (result.log_dir / "coordination_table.txt").read_text()
    assert "subagent water: completed" in table
    shown = out.getvalue()
    assert "[lead] ⇢ subagent water: Find the boiling point of water" in shown
    assert "[lead] ✓ subagent ethanol completed" in shown
    # The children's tokens are charged to the agent that spawned them.
    spent = sum(e.usage.total_tokens for e in events if isinstance(e, ev.UsageReported))
    assert result.usage["lead"].total_tokens == spent
    assert len([e for e in events if isinstance(e, ev.UsageReported)]) == 4  # 2 own + 2 kids


async def test_at_most_max_concurrent_children_run_at_once(in_tmp: Path):
    lock = threading.Lock()
    running, peak = [0], [0]

    def slow_child(request: dict) -> Reply:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.4)
        with lock:
            running[0] -= 1
        task = re.search(r"task \d", _task_of(request)).group(0)
        return Reply(tool_calls=[("new_answer", {"content": f"done: {task}"})])

    tasks = [{"task": f"task {n}"} for n in range(4)]

    def policy(request: dict) -> Reply:
        return slow_child(request) if is_child(request) else parent(tasks)(request)

    with FakeProvider(policy) as fake:
        config = team(fake.base_url, subagent_max_concurrent=2)
        # The call outlasts the per-call timeout: spawn_subagents has its own bound.
        config["orchestrator"]["tool_timeout_seconds"] = 0.5
        config["agents"][0]["backend"].pop("cwd")  # children without a workspace work too
        result = await TeamRun(load(config), "Do four things.").execute()

    assert result.ok, result.reason
    assert peak[0] == 2
    for n in range(4):
        assert f"subagent_{n + 1}=completed:done: task {n}" in result.answer


async def test_a_child_that_hangs_is_timed_out_and_the_other_answers(in_tmp: Path):
    tasks = [{"task": "hang forever", "subagent_id": "stuck"}, TASKS[0]]

    def policy(request: dict) -> Reply:
        if is_child(request) and "hang" in _task_of(request):
            return Reply(fault=Fault(stall_seconds=60))
        return child_answer(request) if is_child(request) else parent(tasks)(request)

    with FakeProvider(policy) as fake:
        config = team(fake.base_url, subagent_default_timeout=2.5)
        config["orchestrator"]["max_tokens"] = 100_000
        started = time.monotonic()
        result = await TeamRun(load(config), "Try both.").execute()
        took = time.monotonic() - started

    assert result.ok, result.reason
    assert "stuck=timeout:" in result.answer
    assert "water=completed:water boils at 100 °C" in result.answer
    assert took < 10
    events = read_journal(result.log_dir / "events.jsonl")
    stuck = next(e for e in events if isinstance(e, ev.SubagentFinished) and e.subagent == "stuck")
    assert stuck.outcome == "timeout" and "deadline" in stuck.reason
    # Each child may spend the parent's budget left, over the children that may run at once.
    spent = next(e for e in events if isinstance(e, ev.UsageReported)).usage.total_tokens
    child = read_journal(result.log_dir / "subagents" / "lead" / "water" / "events.jsonl")
    assert child[0].max_tokens == (100_000 - spent) // 3


async def test_cancelling_the_parent_cancels_its_children(in_tmp: Path):
    child_asked = threading.Event()
    with FakeProvider(stalling_children(child_asked, parent(TASKS))) as fake:
        run = TeamRun(load(team(fake.base_url)), "Start and stop.")
        assert await cancel_once_asked(run, child_asked) < 5

    events = read_journal(run.log_dir / "events.jsonl")
    finished = [e for e in events if isinstance(e, ev.SubagentFinished)]
    assert sorted(e.outcome for e in finished) == ["cancelled", "cancelled"]
    child_status = json.loads(
        (run.log_dir / "subagents" / "lead" / "water" / "status.json").read_text()
    )
    assert child_status["status"] == "interrupted"


async def test_a_spawn_the_permission_engine_refuses_runs_nothing(in_tmp: Path):
    asked = []

    def policy(request: dict) -> Reply:
        asked.append(is_child(request))
        results = tool_results(request)
        if not results:
            return Reply(tool_calls=[("spawn_subagents", {"tasks": TASKS})])
        return Reply(tool_calls=[("new_answer", {"content": f"Got: {results[-1]}"})])

    with FakeProvider(policy) as fake:
        config = team(fake.base_url)
        config["permissions"] = {"automation_default": "deny-all"}
        result = await TeamRun(load(config), "Try.").execute()

    assert result.ok, result.reason
    assert "refused by the permission engine" in result.answer
    assert not any(asked)  # no child ever called the provider


# --- the toolbox alone ---------------------------------------------------------------


def call(**arguments) -> ToolCall:
    return ToolCall(id="c1", name="spawn_subagents", arguments=json.dumps(arguments))


def toolbox(outcomes: list, roles: dict | None = None) -> SubagentToolbox:
    async def spawn(task, ctx, call_id):
        outcomes.append(task)
        return ChildOutcome(f"answer to {task.task}")

    return SubagentToolbox(spawn, Limits(timeout_seconds=30, max_concurrent=2), roles or {})


async def test_bad_calls_are_error_results_and_nothing_runs(tmp_path: Path):
    ran: list = []
    box = toolbox(ran, roles={"critic": "Be critical."})
    ctx = ToolContext(agent="a", workspace=tmp_path)
    too_many = [{"task": f"t{n}"} for n in range(MAX_TASKS + 1)]
    cases = {
        "at most": call(tasks=too_many),
        "same subagent_id": call(tasks=[{"task": "a", "subagent_id": "x"}] * 2),
        "unknown subagent_type 'poet'": call(tasks=[{"task": "a", "subagent_type": "poet"}]),
        "tasks": call(tasks=[]),
    }
    for expected, bad in cases.items():
        result = await box.call(bad, ctx)
        assert result.is_error and expected in result.content, result.content
    assert ran == []
    ok = await box.call(call(tasks=[{"task": "judge", "subagent_type": "critic"}]), ctx)
    assert not ok.is_error and ran[0].role == "Be critical."
    # A name may come again once its child has ended (an agent restarted mid-call repeats
    # it); fresh names skip every name given out before.
    again = await box.call(
        call(tasks=[{"task": "b", "subagent_id": "subagent_1"}, {"task": "c"}]), ctx
    )
    assert [r["subagent_id"] for r in json.loads(again.content)["results"]] == [
        "subagent_1",
        "subagent_2",
    ]


def test_the_tool_declares_its_effects_and_its_own_time_bound(tmp_path: Path):
    box = toolbox([])
    spec = box.specs()[0]
    assert spec.timeout_seconds is not None and spec.timeout_seconds > 30
    assert spec.annotations.read_only is False
    ctx = ToolContext(agent="a", workspace=tmp_path)
    effects = box.effects(call(tasks=[{"task": "t", "subagent_id": "x"}]), ctx)
    assert effects == (Write(tmp_path / "subagents" / "x"), External("massgen", "spawn_subagents"))
    no_workspace = box.effects(call(tasks=[{"task": "t"}]), ToolContext(agent="a"))
    assert no_workspace == (External("massgen", "spawn_subagents"),)


# --- the config ----------------------------------------------------------------------


def test_the_predecessors_subagent_keys_load_typed():
    coordination = predecessor_coordination(
        subagent_default_timeout=200,
        subagent_max_concurrent=3,
        subagent_types=["evaluator", "Critic"],
        subagent_orchestrator={
            "enabled": True,
            "enable_web_search": True,
            "agents": [{"backend": {"type": "openai", "model": "gpt-4o-mini"}}],
        },
    )
    assert coordination.enable_subagents and coordination.subagent_default_timeout == 200
    assert coordination.subagent_types == ("evaluator", "critic")
    assert coordination.subagent_orchestrator.agents[0].backend.model == "gpt-4o-mini"


def test_an_unknown_subagent_type_is_a_config_error():
    raw = {
        "agents": [{"id": "a", "backend": {"type": "openai"}}],
        "orchestrator": {"coordination": {"subagent_types": ["poet"]}},
    }
    with pytest.raises(ConfigError, match=re.escape("unknown subagent type(s) poet")):
        load(raw)


def test_a_child_runs_the_configured_team_without_subagents_servers_or_context_paths(
    tmp_path: Path,
):
    server = {"name": "files", "type": "stdio", "command": "true"}
    base = {"type": "openai", "model": "gpt-4o", "mcp_servers": [server], "cwd": "ws"}
    config = config_from_dict(
        {
            "agents": [{"id": "lead", "backend": base}],
            "orchestrator": {
                "context_paths": [{"path": str(tmp_path), "permission": "write"}],
                "max_tokens": 9000,
                "coordination": {
                    "enable_subagents": True,
                    "subagent_orchestrator": {
                        "enabled": True,
                        "enable_web_search": True,
                        "max_new_answers": 2,
                        "agents": [
                            {"backend": {"type": "openai", "model": "gpt-4o-mini"}},
                            {"id": "judge", "backend": {"type": "openai", "model": "o3"}},
                        ],
                    },
                },
            },
        }
    )
    task = ChildTask("probe", "t", "", "Be critical.", tmp_path / "subagents" / "probe", 10)
    child = child_config(config, "lead", task, (3000, None))
    assert [a.id for a in child.agents] == ["probe_agent_1", "judge"]
    assert [a.backend.cwd for a in child.agents] == ["agent_1", "agent_2"]
    assert all(a.backend.hosted.web_search for a in child.agents)
    assert "Be critical." in (child.agents[0].system_message or "")
    settings = child.orchestrator
    assert not settings.coordination.enable_subagents
    assert settings.context_paths == () and settings.max_tokens == 3000
    assert settings.max_new_answers_per_agent == 2
    # Without a team of its own, a child is the spawning agent's backend, minus servers.
    own = config_from_dict({"agents": [{"id": "lead", "backend": base}]})
    [alone] = child_config(own, "lead", task).agents
    assert alone.id == "lead.probe" and alone.backend.model == "gpt-4o"
    assert alone.backend.cwd == "probe" and alone.backend.mcp_servers == ()


def test_a_subagent_teams_backends_are_checked_at_load_when_they_would_run():
    coordination = {
        "enable_subagents": True,
        "subagent_orchestrator": {
            "enabled": True,
            "agents": [{"backend": {"type": "openai", "enable_x_search": True}}],
        },
    }
    raw = {
        "agents": [{"id": "a", "backend": {"type": "openai", "api_key": "k"}}],
        "orchestrator": {"coordination": coordination},
    }
    with pytest.raises(ConfigError) as refused:
        load(raw)
    assert refused.value.path == (
        "orchestrator.coordination.subagent_orchestrator.agents[0].backend.enable_x_search"
    )
    coordination["subagent_orchestrator"]["enabled"] = False  # described, never run
    assert load(raw).config.orchestrator.coordination.enable_subagents


def test_the_live_view_shows_each_child_in_its_parents_pane():
    from massgen.ui.model import ViewModel

    model = ViewModel()
    started = ev.SubagentStarted(agent="lead", call_id="c", subagent="water", task="Boil it.")
    finished = ev.SubagentFinished(
        agent="lead",
        call_id="c",
        subagent="water",
        outcome="timeout",
        answer="",
        duration_s=2,
        reason="deadline of 1.5s reached",
    )
    for event in (started, finished):
        model.apply(event)
    assert model.pane("lead").runs == [
        ("tool", "⇢ subagent water: Boil it.\n"),
        ("failed", "✗ subagent water timeout 2.0s: deadline of 1.5s reached\n"),
    ]
