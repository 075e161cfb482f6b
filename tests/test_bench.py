"""The benchmark measures what it says: one real team run through the CLI against the
fake server, split at its first LLM call, and the arithmetic of its tables. Correctness of
the instrument, not timings: docs/benchmarks.md holds the numbers."""

from __future__ import annotations

import sys
import time

import pytest

from bench import commands
from bench.doc import lower_bound
from bench.proc import Requests, Sample, measure
from bench.run import _our_cli


def test_a_measured_command_reports_its_wall_time_start_and_exit_code():
    before = time.monotonic()
    sample = measure([sys.executable, "-c", "import time, sys; time.sleep(0.2); sys.exit(3)"])
    assert sample.code == 3
    assert 0.2 <= sample.wall < 5
    assert before <= sample.started <= before + sample.wall  # the shared monotonic clock
    assert sample.rss_mb > 1


def test_a_team_run_splits_at_its_first_llm_call(tmp_path):
    work = commands.Workdir(tmp_path)
    runs = commands.team_runs(_our_cli(), work, [2], latency=0.0, runs=1)
    (run,) = runs[2]

    assert run.process.code == 0, run.process.output[-2000:]
    assert run.requests.calls == 5  # two answers, two votes, one presentation
    assert run.requests.prompt_chars > 0
    assert 0 < run.to_first_call < run.process.wall
    assert run.to_first_call + run.after_first_call == pytest.approx(run.process.wall)


def test_waves_group_arrivals_closer_than_half_a_latency():
    seen = [(at, "m", 10) for at in (0.0, 0.01, 0.02, 0.31, 0.33, 0.64)]
    assert Requests(seen).waves(latency=0.3) == 3
    assert Requests(seen).first_arrival == 0.0


def test_startup_is_spawn_to_first_request():
    process = Sample(wall=1.0, rss_mb=50.0, code=0, output="", started=100.0)
    run = commands.TeamSample(process, Requests([(100.7, "a", 1), (100.4, "b", 1)]))
    assert run.to_first_call == pytest.approx(0.4)
    assert run.after_first_call == pytest.approx(0.6)


def test_the_prompt_lower_bound_shows_each_answer_once_per_round():
    # 2 agents, prompt p=100, answers a=1000: answer round 2p, vote round 2(p + a),
    # presentation p + 2a.
    assert lower_bound(2, 100) == 2 * 100 + 2 * (100 + 1000) + (100 + 2 * 1000)


def test_the_tool_round_trip_times_the_dispatch_inside_the_round_trip():
    from bench import inproc

    samples = inproc.tool_round_trip(1, per_run=2)
    assert len(samples) == 2
    assert all(0 < s.dispatch < s.round_trip and s.model_call > 0 for s in samples)


def test_mcp_servers_start_once_per_session_and_once_per_separate_run():
    pytest.importorskip("mcp")
    from bench import inproc

    (sample,) = inproc.mcp_startup(1)
    servers = inproc.MCP_AGENTS * len(inproc.MCP_SERVERS)
    assert sample.session_starts == servers  # 2 turns, each server process started once
    assert sample.run_starts == servers * inproc.MCP_TURNS  # each run starts its own
    assert len(sample.session_turns) == len(sample.run_turns) == inproc.MCP_TURNS
    assert min(sample.open_s, sample.close_s, sample.bare_turn) > 0
    assert not inproc.server_pids()  # none outlived its session or run


def test_the_workspace_bench_reads_only_what_changed_and_copies_nothing_for_views(monkeypatch):
    from bench import workspace
    from bench.doc import workspace_cost
    from massgen.workspace import store

    monkeypatch.setattr(store, "RACY_SECONDS", 0.05)
    cost = workspace.snapshot_cost(files=40, total_bytes=40 * 1024, agents=3, changed=4)
    first, unchanged, changed = cost.steps
    assert (first.files_read, unchanged.files_read, changed.files_read) == (120, 0, 12)
    assert first.store_bytes == 40 * 1024  # the three agents' identical files, stored once
    assert changed.store_bytes > first.store_bytes
    assert cost.copied_for_views == 0 and cost.view_seconds > 0
    text = workspace_cost(type("R", (), {"workspace": cost})())  # type: ignore[arg-type]
    assert "## 8. Workspace snapshots and peer views" in text
    assert "| re-snapshot, 4 files changed |" in text
