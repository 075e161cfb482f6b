"""A run with workspaces, interrupted after two answers and resumed in process: the
answers' snapshots come back from the store, so the presenter starts from the winner's
files as it would have without the interruption."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import yaml
from test_team_run import IDS, PROGRAM, builder

from massgen.api import TeamRun
from massgen.runs.loading import load
from massgen.runs.resuming import prepare
from massgen.testing import FakeProvider, Reply
from massgen.testing.teams import workspace_agents


async def test_a_resumed_run_presents_from_the_snapshot_of_a_restored_answer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    slow = threading.Event()
    slow.set()

    def policy(request: dict) -> Reply:
        if request["model"] == "model-2" and slow.is_set():
            time.sleep(1.5)  # the third agent is still working when the run is cut
        return builder(request)

    with FakeProvider(policy) as fake:
        agents = workspace_agents(fake.base_url, IDS, model="model-{n}")
        path = tmp_path / "team.yaml"
        orchestrator = {"seed": 5, "max_new_answers_per_agent": 1}
        path.write_text(yaml.safe_dump({"agents": agents, "orchestrator": orchestrator}))
        first = TeamRun(load(str(path)), "Write a hello-world program.")
        task = asyncio.create_task(first.execute())
        deadline = time.monotonic() + 30
        while first.recorder is None or _answers(first) < 2:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        task.cancel()  # what Ctrl-C does
        with contextlib.suppress(asyncio.CancelledError):
            await task
        slow.clear()

        target = prepare(str(first.log_dir), None)
        assert target.resumed.summary() == "resumed: 2 answers, 0 votes (attempt 2)"
        second = TeamRun(
            target.loaded, target.resumed.question, log_dir=target.log_dir, resumed=target.resumed
        )
        result = await second.execute()

    assert result.ok, result.reason
    assert result.log_dir == first.log_dir
    restored = {a.agent for a in second.outcome.answers}
    assert result.winner in restored
    winner_model = f"model-{IDS.index(result.winner)}"
    final = result.log_dir / "final" / "workspace"
    assert (final / "src" / "main.py").read_text() == PROGRAM.format(model=winner_model)
    assert (final / "NOTES.md").read_text() == "presented"
    # What the first attempt spent is part of the run's cost.
    spent_first = first.outcome.usage
    assert sum(u.input_tokens for u in spent_first.values()) > 0
    for agent, spent in spent_first.items():
        assert result.usage[agent].input_tokens > spent.input_tokens


def _answers(run: TeamRun) -> int:
    return sum(len(agent.answers) for agent in run.recorder.state.agents.values())
