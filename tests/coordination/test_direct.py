"""`orchestrator.skip_coordination_rounds`: the first agent presents at once, with its tools."""

from __future__ import annotations

import json
from pathlib import Path

from massgen.api import TeamRun
from massgen.core import events as ev
from massgen.runs.loading import load
from massgen.testing import FakeProvider
from massgen.testing.policy import Fault, Reply
from massgen.testing.teams import workspace_agents


def agents(base_url: str) -> list[dict]:
    """Two agents with workspaces, told apart by their models."""
    return workspace_agents(base_url, ("first", "second"), model="model-{n}")


def writes_then_answers(target: Path):
    """Writes `target` when offered `write_file` and nothing was written yet, then answers."""

    def reply(request: dict) -> Reply:
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        if {"new_answer", "vote"} & offered:
            return Reply(text="a coordination call, which must not happen")
        done = any(m.get("role") == "tool" for m in request["messages"])
        if "write_file" in offered and not done:
            return Reply(tool_calls=[("write_file", {"path": str(target), "content": "hi\n"})])
        return Reply(text="Wrote hello.txt into the site.")

    return reply


def config(base_url: str, **orchestrator) -> dict:
    return {
        "agents": agents(base_url),
        "orchestrator": {"skip_coordination_rounds": True, **orchestrator},
    }


async def test_the_first_agent_presents_and_writes_a_context_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    events: list[ev.AnyEvent] = []
    with FakeProvider(writes_then_answers(site / "hello.txt")) as fake:
        loaded = load(
            config(fake.base_url, context_paths=[{"path": "site", "permission": "write"}])
        )
        run = TeamRun(loaded, "Put hello.txt in the site.", sinks=[events.append])
        result = await run.execute()
        models = {r["model"] for r in fake.requests}
        tool_names = {t["function"]["name"] for r in fake.requests for t in r.get("tools") or []}

    assert result.ok, result.reason
    assert result.answer == "Wrote hello.txt into the site."
    assert models == {"model-0"}  # only the first agent's model was called
    assert not {"new_answer", "vote"} & tool_names
    assert (site / "hello.txt").read_text() == "hi\n"
    assert list(result.context_changes.created) == [str((site / "hello.txt").resolve())]
    assert result.winner == "first"
    kinds = [type(e).__name__ for e in events]
    assert "AgentStarted" not in kinds and "AnswerPublished" not in kinds
    started = next(e for e in events if isinstance(e, ev.PresentationStarted))
    assert (started.agent, started.strategy) == ("first", "skip_coordination")
    finished = next(e for e in events if isinstance(e, ev.CoordinationFinished))
    assert "skip_coordination_rounds" in finished.reason
    final = "".join(e.text for e in events if isinstance(e, ev.FinalTextDelta))
    assert final == "Wrote hello.txt into the site."
    logged = [json.loads(line)["type"] for line in (result.log_dir / "events.jsonl").open()]
    assert "presentation_started" in logged and "agent_started" not in logged
    assert run.final_workspace is not None and run.final_workspace.is_dir()


async def test_a_failing_first_agent_fails_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with FakeProvider(lambda request: Reply(fault=Fault.http(401, "bad key"))) as fake:
        result = await TeamRun(load(config(fake.base_url)), "Hi?").execute()
        models = {r["model"] for r in fake.requests}
    assert not result.ok
    assert models == {"model-0"}
    assert "first agent failed" in result.reason


def test_the_predecessor_key_loads():
    loaded = load(
        {
            "agents": [
                {
                    "id": "a",
                    "backend": {
                        "type": "chatcompletion",
                        "model": "m",
                        "base_url": "http://127.0.0.1:9/v1",
                    },
                }
            ],
            "orchestrator": {"skip_coordination_rounds": True},
        }
    )
    assert loaded.config.orchestrator.skip_coordination_rounds


async def test_the_live_view_shows_the_first_agent_presenting(tmp_path, monkeypatch):
    from io import StringIO

    from rich.console import Console

    from massgen.ui.live import render_live
    from massgen.ui.model import ViewModel

    monkeypatch.chdir(tmp_path)
    events: list[ev.AnyEvent] = []
    with FakeProvider(lambda request: Reply(text="Paris.")) as fake:
        run = TeamRun(load(config(fake.base_url, seed=1)), "Capital?", sinks=[events.append])
        await run.execute()
    model = ViewModel()
    for event in events[:-1]:  # as it presents, before the run ends
        model.apply(event)
    console = Console(file=StringIO(), width=80, height=12, color_system=None)
    console.print(render_live(model, width=80, height=12, elapsed=3.0))
    lines = console.file.getvalue().splitlines()
    assert "first" in lines[1] and "second" in lines[1]
    assert "★ presenting the final answer" in lines[2] and "waiting" in lines[2]
    assert "Paris." in lines[4]
    assert "presenting (first)" in lines[-1]


async def test_an_evaluation_may_restart_it_and_the_presenter_is_told_why(tmp_path, monkeypatch):
    # The predecessor's debug/restart_test_controlled.yaml: skip, present, evaluate, restart.
    monkeypatch.chdir(tmp_path)
    verdicts = [
        Reply(tool_calls=[("restart_orchestration", {"reason": "too short", "instructions": "+"})]),
        Reply(tool_calls=[("submit", {"confirmed": True})]),
    ]
    presented: list[dict] = []

    def reply(request: dict) -> Reply:
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        if "submit" in offered:
            return verdicts.pop(0)
        presented.append(request)
        return Reply(text=f"presentation {len(presented)}")

    coordination = {"max_orchestration_restarts": 2}
    with FakeProvider(reply) as fake:
        loaded = load(config(fake.base_url, coordination=coordination))
        result = await TeamRun(loaded, "Hi?", logs=False).execute()
        models = {r["model"] for r in fake.requests}

    assert result.ok and result.answer == "presentation 2"
    assert result.attempts == 2 and models == {"model-0"}
    user = [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in presented]
    assert "PREVIOUS ATTEMPT FEEDBACK" not in user[0]
    assert user[1].startswith("<PREVIOUS ATTEMPT FEEDBACK>") and "too short" in user[1]


async def test_the_deadline_bounds_the_presentation(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stall = Reply(text="late", fault=Fault(stall_seconds=5))
    with FakeProvider(lambda request: stall) as fake:
        run = TeamRun(load(config(fake.base_url)), "Hi?", logs=False, deadline_seconds=0.5)
        result = await run.execute()
    assert result.status == "timeout" and "deadline" in result.reason
    assert result.answer == ""
