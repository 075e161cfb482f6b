"""A whole team run with tools: three agents on the real openai SDK against the loopback
fake provider, each calling an in-process tool; the final answer uses its result, and
the calls are in the plain output, events.jsonl and the coordination table."""

from __future__ import annotations

import dataclasses
import json
import re
from io import StringIO

from massgen.coordination.orchestrator import Orchestrator
from massgen.core import events as ev
from massgen.record.recorder import Recorder
from massgen.runs.loading import load
from massgen.runs.members import build as build_members
from massgen.testing import FakeProvider, Reply, cooperative_agent, tool_first
from massgen.testing.tools import InProcessTools
from massgen.ui.plain import PlainView

QUESTION = "What is the population of the capital of France?"


def present_selected(request: dict) -> Reply:
    user = request["messages"][-1]["content"]
    selected = re.search(r"<SELECTED ANSWER [^>]+>\n(.*?)\n<END OF SELECTED ANSWER>", user, re.S)
    return Reply(text=f"Final: {selected.group(1) if selected else '?'}")


# Look the figure up before the first answer; vote; present the selected answer.
tool_user = tool_first(
    "population", {"city": "Paris"}, lambda found: f"Paris has {found}.", present_selected
)


async def population(city: str) -> str:
    return {"Paris": "2,102,650 people (INSEE 2023)"}.get(city, "unknown")


async def test_agents_call_a_tool_and_the_final_answer_uses_its_result(tmp_path):
    tools = InProcessTools().add(
        "population", population, description="Population of a city", read_only=True
    )
    with FakeProvider(tool_user) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "api_key": "k"}
        config = {
            "agents": [{"id": m, "backend": {**backend, "model": m}} for m in ("m1", "m2", "m3")],
            # Three identical answers would agree and skip the presentation this test reads.
            "orchestrator": {"seed": 3, "max_new_answers_per_agent": 1, "agreement": "none"},
        }
        loaded = load(config)
        members = [
            dataclasses.replace(member, toolbox=tools)
            for member in build_members(loaded.config, env={})
        ]
        out = StringIO()
        recorder = Recorder(tmp_path, question=QUESTION)
        sinks = [recorder.handle, PlainView(out, show_text=False)]
        orchestrator = Orchestrator(
            members, loaded.config.orchestrator, emit=lambda e: [s(e) for s in sinks]
        )
        outcome = await orchestrator.run(QUESTION)
        recorder.close()
        requests = fake.requests

    assert outcome.status == "ok"
    assert outcome.answer == "Final: Paris has 2,102,650 people (INSEE 2023)."
    assert sorted(r.agent for r in tools.ran) == ["m1", "m2", "m3"]
    # The tool went out in the Chat Completions shape and its result came back as a tool
    # message answering the call's id.
    with_result = next(r for r in requests if any(m["role"] == "tool" for m in r["messages"]))
    call = with_result["messages"][-2]["tool_calls"][0]
    assert call["function"]["name"] == "population"
    assert with_result["messages"][-1] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": "2,102,650 people (INSEE 2023)",
    }
    assert any(t["function"]["name"] == "population" for t in with_result["tools"])

    lines = out.getvalue().splitlines()
    for agent in ("m1", "m2", "m3"):
        assert f'[{agent}] ⚙ population({{"city": "Paris"}})' in lines
        assert any(re.fullmatch(rf"\[{agent}\] ✓ population \S+s: 2,102,650 .*", x) for x in lines)

    logged = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    finished = [e for e in logged if e["type"] == "tool_call_finished"]
    assert len(finished) == 3 and all(e["ok"] and e["duration_s"] >= 0 for e in finished)
    assert {ev.event_from_dict(e).name for e in finished} == {"population"}
    table = (tmp_path / "coordination_table.txt").read_text()
    assert table.count("tool population: ok") == 3


# --- a tool source that does not start is an event ----------------------------------------

MISSING = "MCP server `none` (no-such-cmd-xyz) did not start: "


async def test_an_mcp_server_that_does_not_start_is_an_event_every_view_shows(tmp_path):
    import pytest

    pytest.importorskip("mcp")
    from massgen import api
    from massgen.record.table import coordination_table
    from massgen.ui.model import ViewModel

    events: list[ev.AnyEvent] = []
    with FakeProvider(cooperative_agent) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "model": "m"}
        missing = {"none": {"command": "no-such-cmd-xyz"}}
        config = {
            "agents": [
                {"id": "a", "backend": {**backend, "mcp_servers": missing}},
                {"id": "b", "backend": backend},
            ]
        }
        out = StringIO()
        run = api.TeamRun(
            api.load(config), QUESTION, sinks=[PlainView(out), events.append], log_dir=tmp_path
        )
        result = await run.execute()

    assert result.ok  # the agent goes on without its tools
    assert [e.kind for e in events[:2]] == ["run_started", "tool_source_failed"]
    failed = events[1]
    assert isinstance(failed, ev.ToolSourceFailed)
    assert (failed.agent, failed.source) == ("a", "none")
    assert failed.error.startswith(MISSING) and failed.error.endswith("; skipped")
    why = failed.error.removeprefix(MISSING)
    assert out.getvalue().splitlines()[:2] == [
        "massgen: 2 agent(s): a, b",
        f"[a] ✗ tools unavailable: {MISSING}{why}",
    ]
    # The log keeps it, and the coordination table and the live view show it.
    assert run.log_dir is not None
    logged = [json.loads(line) for line in (run.log_dir / "events.jsonl").read_text().splitlines()]
    assert [e for e in logged if e["type"] == "tool_source_failed"] == [failed.to_dict()]
    table = coordination_table(events).splitlines()
    assert table[2].split("|")[0].rstrip() == "tool source none failed"
    model = ViewModel()
    for event in events[:2]:
        model.apply(event)
    assert model.pane("a").runs == [("failed", f"✗ tools unavailable: {MISSING}{why}\n")]


async def test_failures_of_tools_opened_by_the_caller_follow_run_started():
    from massgen import api

    events: list[ev.AnyEvent] = []
    failed = ev.ToolSourceFailed(agent="a", source="calc", error="did not start")
    with FakeProvider(cooperative_agent) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "model": "m"}
        loaded = api.load({"agents": [{"id": "a", "backend": backend}]})
        run = api.TeamRun(
            loaded,
            QUESTION,
            sinks=[events.append],
            logs=False,
            toolboxes={},
            tool_failures=[failed],
        )
        await run.execute()
    assert [e.kind for e in events[:3]] == ["run_started", "tool_source_failed", "agent_started"]
    assert events[1] == failed
