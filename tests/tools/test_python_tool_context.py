"""Predecessor-style custom tools: `@context_params` parameters are hidden from the model
and filled from the run (the task, the agent's id, ...), and generator tools (async and
sync) give the model their non-log yields, in order."""

from __future__ import annotations

import asyncio
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

import massgen
from massgen.config import load_config
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.runs.toolboxes import python_toolboxes
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.tool import ExecutionResult, TextContent, context_params
from massgen.tools import python as python_tools
from massgen.tools.python import PythonToolbox, tool_from_function

CTX = ToolContext(agent="a1", workspace=Path("/work/space"), task="What is 2 + 2?")

TOOLS = '''
from massgen.tool import context_params
from massgen.tool._decorators import context_params as same_decorator
from massgen.tool._result import ExecutionResult, TextContent


@context_params("prompt", "agent_id")
async def who_asks(note: str, prompt: list, agent_id: str) -> str:
    """Say who calls and what they were asked."""
    return f"{note}: {agent_id} was asked {prompt[0]['role']}:{prompt[0]['content']!r}"


@same_decorator("colour")
def paint(colour: str) -> str:
    """No context value is called colour."""
    return colour
'''


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=json.dumps(arguments))


def config_file(directory: Path, tools: list[dict], base_url: str = "http://x/v1") -> Path:
    tools_file = directory / "tools" / "context_tools.py"
    tools_file.parent.mkdir(parents=True, exist_ok=True)
    tools_file.write_text(textwrap.dedent(TOOLS))
    backend = {"type": "chatcompletion", "model": "m1", "base_url": base_url, "api_key": "k"}
    agents = [
        {"id": agent, "backend": {**backend, "model": model, "custom_tools": tools}}
        for agent, model in (("a1", "m1"), ("a2", "m2"))
    ]
    file = directory / "team.json"
    file.write_text(json.dumps({"agents": agents}))
    return file


WHO_ASKS = {"name": "who_asks", "path": "tools/context_tools.py"}


# ---------------------------------------------------------------- context parameters


def test_a_team_tool_gets_the_question_and_its_agent_id_and_the_model_never_sees_them(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    offered: list[dict] = []

    def agent(request: dict) -> Reply:
        tools = {t["function"]["name"]: t["function"] for t in request.get("tools") or []}
        results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        if "vote" in tools:
            return cooperative_agent(request)
        if "new_answer" in tools:
            offered.append(tools["who_asks"]["parameters"])
            if not results:
                return Reply(tool_calls=[("who_asks", {"note": "seen"})])
            return Reply(tool_calls=[("new_answer", {"content": f"Result: {results[-1]}"})])
        user = request["messages"][-1]["content"]
        return Reply(text="Final. " + user.split("<SELECTED ANSWER", 1)[-1][:400])

    with FakeProvider(agent) as fake:
        file = config_file(tmp_path, [WHO_ASKS], fake.base_url)
        result = massgen.run("How tall is the Eiffel Tower?", config=str(file), logs=False)
    assert result.status == "ok"
    assert offered and all(set(p["properties"]) == {"note"} for p in offered)
    assert all(p["required"] == ["note"] for p in offered)
    assert (
        "seen: a1 was asked user:" in result.answer or "seen: a2 was asked user:" in result.answer
    )
    assert "How tall is the Eiffel Tower?" in result.answer.split("was asked", 1)[1]


async def test_every_supported_context_name_is_filled_from_the_run(tmp_path):
    seen: dict[str, Any] = {}
    names = ("agent_id", "agent_cwd", "prompt", "messages", "user_messages", "allowed_paths")

    @context_params(*names, "backend_type", "model", "task_context")
    def look_at(
        agent_id: str,
        agent_cwd: str | None,
        prompt: list,
        messages: list,
        user_messages: list,
        allowed_paths: list,
        backend_type: str,
        model: str,
        task_context: str | None,
    ) -> str:
        seen.update({k: v for k, v in locals().items() if k != "seen"})
        return "ok"

    tool = tool_from_function(look_at, "look_at")
    assert tool.spec.parameters.get("properties", {}) == {}
    (tmp_path / "CONTEXT.md").write_text("Audience: fourth graders")
    ctx = ToolContext(agent="a1", workspace=tmp_path, task="What is 2 + 2?")
    facts = python_tools.AgentFacts("openai", "gpt-4o", ("/data/ref",))
    result = await PythonToolbox([tool], 5, facts).call(call("look_at"), ctx)
    assert result.content == "ok"
    question = [{"role": "user", "content": "What is 2 + 2?"}]
    assert seen == {
        "agent_id": "a1",
        "agent_cwd": str(tmp_path),
        "prompt": question,
        "messages": question,
        "user_messages": question,
        "allowed_paths": [str(tmp_path), "/data/ref"],
        "backend_type": "openai",
        "model": "gpt-4o",
        "task_context": "Audience: fourth graders",
    }
    no_workspace = ToolContext(agent="a2")
    await PythonToolbox([tool], 5, facts).call(call("look_at"), no_workspace)
    assert seen["agent_cwd"] is None and seen["task_context"] is None
    assert seen["prompt"] == [] and seen["allowed_paths"] == ["/data/ref"]


async def test_a_model_passing_a_context_parameter_gets_an_error_and_the_tool_does_not_run():
    ran: list[str] = []

    @context_params("agent_id")
    def whoami(agent_id: str) -> str:
        ran.append(agent_id)
        return agent_id

    box = PythonToolbox([tool_from_function(whoami, "whoami")], 5)
    result = await box.call(call("whoami", agent_id="the boss"), CTX)
    assert result.is_error and "agent_id" in result.content and "Extra inputs" in result.content
    assert ran == []
    assert (await box.call(call("whoami"), CTX)).content == "a1"


def test_a_context_name_massgen_cannot_fill_is_a_config_error_naming_it(tmp_path):
    entry = {"name": "paint", "path": "tools/context_tools.py"}
    config = load_config(config_file(tmp_path, [entry]))
    with pytest.raises(ConfigError) as error:
        python_toolboxes(config, source="team.json")
    text = str(error.value)
    assert text.startswith("team.json: agents[0].backend.custom_tools[0].function:")
    assert "`paint`" in text and "context_tools.py" in text and "`colour`" in text
    assert "@context_params" in text  # the fix


def test_a_context_name_that_is_no_parameter_is_refused():
    @context_params("prompt")
    def f(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="context_params names no parameter of `f`: prompt"):
        tool_from_function(f, "f")


# ---------------------------------------------------------------- generators


async def test_an_async_generator_gives_the_model_its_non_log_yields_in_order():
    async def plan(topic: str):
        yield ExecutionResult(output_blocks=[TextContent(data=f"Plan for {topic}:")])
        yield ExecutionResult(output_blocks=[TextContent(data="[step 1 thinking]")], is_log=True)
        await asyncio.sleep(0)
        yield ExecutionResult(output_blocks=[TextContent(data=" one,")])
        yield ExecutionResult(output_blocks=[TextContent(data="[step 2 thinking]")], is_log=True)
        yield ExecutionResult(output_blocks=[TextContent(data=" two")])

    box = PythonToolbox([tool_from_function(plan, "plan")], 5)
    result = await box.call(call("plan", topic="rain"), CTX)
    assert not result.is_error
    assert result.content == "Plan for rain: one, two"


async def test_a_sync_generator_works_and_plain_values_may_be_yielded():
    def count(n: int):
        for i in range(n):
            yield f"{i};"
        yield ExecutionResult(output_blocks=[TextContent(data="done")], is_log=True)

    box = PythonToolbox([tool_from_function(count, "count")], 5)
    assert (await box.call(call("count", n=3), CTX)).content == "0;1;2;"


async def test_a_generator_failing_midway_is_an_error_that_keeps_what_it_yielded():
    async def flaky():
        yield "part one"
        raise RuntimeError("the API went away")

    box = PythonToolbox([tool_from_function(flaky, "flaky")], 5)
    result = await box.call(call("flaky"), CTX)
    assert result.is_error
    assert "raised RuntimeError: the API went away" in result.content
    assert result.content.endswith("part one")


async def test_a_generator_past_its_timeout_is_an_error_with_what_it_yielded():
    async def slow():
        yield "early"
        await asyncio.sleep(30)
        yield "late"

    box = PythonToolbox([tool_from_function(slow, "slow")], 0.2)
    result = await box.call(call("slow"), CTX)
    assert result.is_error and "timed out after 0.2s" in result.content
    assert "early" in result.content and "late" not in result.content


async def test_a_generator_yielding_too_much_is_closed_and_the_cut_said(monkeypatch):
    monkeypatch.setattr(python_tools, "MAX_YIELDED_CHARS", 10)
    closed: list[bool] = []

    def endless():
        try:
            while True:
                yield "abcd"
        finally:
            closed.append(True)

    box = PythonToolbox([tool_from_function(endless, "endless")], 5)
    result = await box.call(call("endless"), CTX)
    assert result.content.startswith("abcdabcdab\n[output cut")
    assert closed == [True]


async def test_a_context_md_that_is_a_link_or_a_fifo_gives_no_task_context(tmp_path):
    seen: list[str | None] = []

    @context_params("task_context")
    def look(task_context: str | None) -> str:
        seen.append(task_context)
        return "ok"

    box = PythonToolbox([tool_from_function(look, "look")], 5)
    ctx = ToolContext(agent="a1", workspace=tmp_path)
    secret = tmp_path.parent / "id_rsa"
    secret.write_text("PRIVATE KEY")
    (tmp_path / "CONTEXT.md").symlink_to(secret)
    assert (await box.call(call("look"), ctx)).content == "ok"
    (tmp_path / "CONTEXT.md").unlink()
    os.mkfifo(tmp_path / "CONTEXT.md")  # opened without O_NONBLOCK, this blocked the loop
    result = await asyncio.wait_for(box.call(call("look"), ctx), 5)
    assert result.content == "ok" and seen == [None, None]
