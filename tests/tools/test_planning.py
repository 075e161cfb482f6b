"""Task-planning tools (`coordination.enable_agent_task_planning`): a plan per agent, with
the predecessor's tool names, bounded, written to the workspace in filesystem mode."""

from __future__ import annotations

import json
from pathlib import Path

from massgen.config import config_from_dict
from massgen.core.effects import Write
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.runs.toolboxes import planning
from massgen.tools.planning import PLAN_FILE, PlanToolbox


def call(name: str, **arguments) -> ToolCall:
    return ToolCall(id="c", name=name, arguments=json.dumps(arguments))


async def test_a_plan_is_created_updated_and_read_back():
    box = PlanToolbox(limit=10, on_disk=False)
    ctx = ToolContext(agent="a")
    assert {s.name for s in box.specs()} == {
        "create_task_plan",
        "add_task",
        "update_task_status",
        "get_task_plan",
    }
    tasks = [{"id": "research", "description": "Find sources"}, {"description": "Write it up"}]
    created = await box.call(call("create_task_plan", tasks=tasks), ctx)
    assert not created.is_error
    await box.call(call("update_task_status", task_id="research", status="completed"), ctx)
    plan = json.loads((await box.call(call("get_task_plan"), ctx)).content)
    assert [(t["id"], t["status"]) for t in plan["tasks"]] == [
        ("research", "completed"),
        ("task_2", "pending"),
    ]
    assert plan["counts"]["completed"] == 1
    assert box.effects(call("get_task_plan"), ctx) == ()


async def test_mistakes_are_error_results_and_the_plan_is_bounded():
    box = PlanToolbox(limit=2, on_disk=False)
    ctx = ToolContext(agent="a")
    three = [{"description": f"t{i}"} for i in range(3)]
    too_many = await box.call(call("create_task_plan", tasks=three), ctx)
    assert too_many.is_error and "at most 2 tasks" in too_many.content
    missing = await box.call(call("update_task_status", task_id="nope", status="completed"), ctx)
    assert missing.is_error and "no task `nope`" in missing.content
    bad = await box.call(call("update_task_status", task_id="x", status="done"), ctx)
    assert bad.is_error and "status" in bad.content
    orphan = await box.call(call("add_task", description="d", depends_on=["ghost"]), ctx)
    assert orphan.is_error and "ghost" in orphan.content


async def test_filesystem_mode_writes_the_plan_into_the_workspace(tmp_path: Path):
    box = PlanToolbox(limit=10, on_disk=True)
    ctx = ToolContext(agent="a", workspace=tmp_path)
    assert box.effects(call("add_task", description="d"), ctx) == (Write(tmp_path / PLAN_FILE),)
    await box.call(call("add_task", description="Draft the report"), ctx)
    saved = json.loads((tmp_path / PLAN_FILE).read_text())
    assert saved["tasks"][0]["description"] == "Draft the report"


def test_the_config_gives_every_agent_its_own_plan():
    agents = [{"id": i, "backend": {"type": "openai"}} for i in ("a", "b")]
    on = {"coordination": {"enable_agent_task_planning": True, "max_tasks_per_plan": 3}}
    boxes = planning(config_from_dict({"agents": agents, "orchestrator": on}))
    assert set(boxes) == {"a", "b"} and boxes["a"] is not boxes["b"]
    assert planning(config_from_dict({"agents": agents})) == {}


async def test_filesystem_mode_does_not_write_through_a_planted_link(tmp_path: Path):
    workspace, outside = tmp_path / "ws", tmp_path / "outside.txt"
    (workspace / "tasks").mkdir(parents=True)
    outside.write_text("untouched\n")
    (workspace / "tasks" / "plan.tmp").symlink_to(outside)  # the temp name massgen used
    box = PlanToolbox(limit=10, on_disk=True)
    ctx = ToolContext(agent="a", workspace=workspace)
    await box.call(call("add_task", description="Draft the report"), ctx)
    assert outside.read_text() == "untouched\n"
    assert json.loads((workspace / PLAN_FILE).read_text())["tasks"][0]["description"]
