"""A running tool call says how it is going: a generator tool's `is_log` yields and an MCP
server's progress notifications become `ToolCallProgress` events, bounded per call, in
order, before the call's result, and never in what the model reads."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import massgen
from massgen.config.schema import MassgenConfig
from massgen.coordination.tool_round import ToolBounds, run_round
from massgen.core import events as ev
from massgen.core import tool_progress as progress
from massgen.core.tool_progress import ProgressGate
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.testing import FakeProvider, Reply, tool_first
from massgen.tools.mcp import open_team

TOOLS = '''
import asyncio

from massgen.tool import ExecutionResult, TextContent


def log(text):
    return ExecutionResult(output_blocks=[TextContent(data=text)], is_log=True)


def chatty(lines: int):
    """Work through `lines` lines, logging each (a sync generator: drained in a thread)."""
    yield "started;"
    for i in range(lines):
        yield log(f"line {i}")
    yield " finished"


async def steps(n: int):
    """Take `n` steps, logging each."""
    for i in range(n):
        yield log(f"step {i} of {n}")
        await asyncio.sleep(0)
    yield "walked"
'''


def team_file(directory: Path, base_url: str) -> Path:
    (directory / "tools.py").write_text(textwrap.dedent(TOOLS))
    tools = [{"name": ["chatty", "steps"], "path": str(directory / "tools.py")}]
    backend = {"type": "chatcompletion", "model": "m1", "base_url": base_url, "api_key": "k"}
    data = {"agents": [{"id": "a1", "backend": {**backend, "custom_tools": tools}}]}
    file = directory / "team.json"
    file.write_text(json.dumps(data))
    return file


def calling(name: str, arguments: dict[str, Any], seen: list[str]):
    """An agent that calls `name` once, keeps what the tool gave it, then answers."""

    def answer(result: str) -> str:
        seen.append(result)
        return f"Tool said: {result}"

    return tool_first(name, arguments, answer, lambda _: Reply(text="Final answer."))


async def events_of(tmp_path: Path, name: str, arguments: dict[str, Any], seen: list[str]):
    with FakeProvider(calling(name, arguments, seen)) as fake:
        config = str(team_file(tmp_path, fake.base_url))
        return [e async for e in massgen.stream("Go.", config=config, logs=False)]


def of_call(events: list[ev.AnyEvent], name: str) -> list[ev.AnyEvent]:
    return [
        e
        for e in events
        if isinstance(e, ev.ToolCallStarted | ev.ToolCallProgress | ev.ToolCallFinished)
        and e.name == name
    ]


async def test_log_yields_are_progress_in_order_and_not_in_the_models_result(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "MIN_INTERVAL_S", 0.0)
    seen: list[str] = []
    events = await events_of(tmp_path, "steps", {"n": 5}, seen)
    call = of_call(events, "steps")
    assert isinstance(call[0], ev.ToolCallStarted) and isinstance(call[-1], ev.ToolCallFinished)
    lines = [e.message for e in call[1:-1] if isinstance(e, ev.ToolCallProgress)]
    assert lines == [f"step {i} of 5" for i in range(5)]
    assert {e.call_id for e in call} == {call[0].call_id}
    assert call[-1].result == "walked"
    assert seen == ["walked"]  # the model read no log line


async def test_a_thousand_log_lines_give_at_most_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "MIN_INTERVAL_S", 0.0)  # only the count bounds them now
    seen: list[str] = []
    events = await events_of(tmp_path, "chatty", {"lines": 1000}, seen)
    lines = [e.message for e in of_call(events, "chatty") if isinstance(e, ev.ToolCallProgress)]
    assert lines == [f"line {i}" for i in range(progress.MAX_EVENTS)]
    assert seen == ["started; finished"]


async def test_a_fast_chatty_tool_is_rate_limited_and_its_last_line_is_shown(tmp_path):
    seen: list[str] = []
    events = await events_of(tmp_path, "chatty", {"lines": 1000}, seen)
    call = of_call(events, "chatty")
    lines = [e.message for e in call if isinstance(e, ev.ToolCallProgress)]
    assert 2 <= len(lines) <= 10  # the first, a few more if the machine is slow, the last
    assert lines[0] == "line 0" and lines[-1] == "line 999"
    assert isinstance(call[-1], ev.ToolCallFinished)  # after every progress line
    assert seen == ["started; finished"]


def test_the_gate_cuts_long_lines_spaces_them_out_and_stops_at_close():
    sent: list[str] = []
    now = [0.0]
    gate = ProgressGate(sent.append, max_events=3, min_interval_s=1.0, clock=lambda: now[0])
    gate("a\nvery\x1b[2J long " + "x" * 1000)
    gate("too soon")
    gate("sooner still")  # supersedes the one waiting
    now[0] = 5.0
    gate("later")
    gate("waiting")
    gate.close()
    gate("after the result")
    assert sent[0].startswith("a very[2J long xxx") and len(sent[0]) == progress.MAX_CHARS
    assert sent[0].endswith("…")
    assert sent[1:] == ["later", "waiting"]
    assert gate.dropped == 3


# --- MCP --------------------------------------------------------------------------------

SERVER = str(Path(__file__).with_name("progress_server.py"))


async def test_an_mcp_servers_progress_notifications_are_progress_events(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "MIN_INTERVAL_S", 0.0)
    servers = {"p": {"command": sys.executable, "args": [SERVER]}}
    config = MassgenConfig.model_validate(
        {"agents": [{"id": "a", "backend": {"type": "chatcompletion", "mcp_servers": servers}}]}
    )
    events: list[ev.AnyEvent] = []
    async with open_team(config, log_dir=tmp_path, warn=pytest.fail) as boxes:
        calls = [ToolCall("c1", "mcp__p__countdown", '{"steps": 3}')]
        (result,) = await run_round(
            boxes["a"], calls, ToolContext("a"), ToolBounds(), events.append
        )
    assert result.content == "counted 3" and not result.is_error
    lines = [e.message for e in events if isinstance(e, ev.ToolCallProgress)]
    assert lines == ["1/3 step 1", "2/3 step 2", "3/3 step 3", "4"]
    assert isinstance(events[-1], ev.ToolCallFinished)
    assert all(e.call_id == "c1" and e.agent == "a" for e in events)


async def test_without_a_listener_an_mcp_tool_still_answers(tmp_path):
    servers = {"p": {"command": sys.executable, "args": [SERVER]}}
    config = MassgenConfig.model_validate(
        {"agents": [{"id": "a", "backend": {"type": "chatcompletion", "mcp_servers": servers}}]}
    )
    async with open_team(config, log_dir=tmp_path, warn=pytest.fail) as boxes:
        call = ToolCall("c1", "mcp__p__countdown", '{"steps": 2}')
        assert (await boxes["a"].call(call, ToolContext("a"))).content == "counted 2"


# --- the event, journalled ----------------------------------------------------------------


def test_the_event_round_trips_through_the_journal(tmp_path):
    from massgen.record.journal import Journal, read_journal

    event = ev.ToolCallProgress(
        agent="a1", call_id="c1", name="fetch", message="3/10 pages", phase="presentation"
    )
    journal = Journal(tmp_path / "events.jsonl")
    journal.append(event)
    journal.close()
    (back,) = read_journal(tmp_path / "events.jsonl")
    assert back == event and back.at == event.at
    assert json.loads((tmp_path / "events.jsonl").read_text())["type"] == "tool_call_progress"
