"""`massgen batch` end to end on the fake provider: results, baselines at equal tokens,
resume, retries, a changed config, Ctrl-C, and the report."""

from __future__ import annotations

import json
import signal
import time

import pytest
from batch_support import (
    asked,
    batch_process,
    presentations,
    rows,
    summing_agent,
    write_tasks,
    write_team,
)

from massgen.cli import main
from massgen.testing.fake_provider import FakeProvider, Fault, Reply

pytestmark = pytest.mark.usefixtures("in_tmp")


def run_batch(tmp_path, fake, count=6, *extra):
    tasks = write_tasks(tmp_path / "tasks.jsonl", count)
    team = write_team(tmp_path / "team.json", fake.base_url)
    argv = ["batch", str(tasks), "--config", str(team), "--out", str(tmp_path / "out"), *extra]
    return main(argv)


def test_results_and_summary_with_baselines_at_equal_tokens(tmp_path, capsys):
    with FakeProvider(summing_agent) as fake:
        code = run_batch(tmp_path, fake, 6, "--baselines", "single,self-consistency")
    assert code == 0
    found = rows(tmp_path / "out")
    methods = {row["method"] for row in found}
    assert methods == {"team", "single:a0", "single:a1", "self-consistency"}
    assert len(found) == 6 * 4
    team = [row for row in found if row["method"] == "team"]
    assert all(row["status"] == "ok" and row["score"] == 1.0 for row in team)
    assert all(row["winner"] in {"a0", "a1"} and row["tokens"] == 100 for row in team)
    assert all((tmp_path / "out" / "runs").glob("q0-*/team/events.jsonl"))

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    by = {entry["method"]: entry for entry in summary["methods"]}
    # A team of two: 2 answers + 2 votes + 1 presentation at 20 tokens each = 100; one
    # call is 20, so self-consistency gets k=5 samples from the better member (a0).
    assert by["self-consistency"]["k"] == 5 and by["self-consistency"]["member"] == "a0"
    assert by["self-consistency"]["tokens_per_question"] == by["team"]["tokens_per_question"]
    assert by["single:a0"]["tokens_per_question"] == 20
    assert by["team"]["accuracy"] == 1.0 and by["single:a1"]["accuracy"] == 0.0
    assert by["team"]["interval"][0] == pytest.approx(0.6097, abs=1e-3)
    assert by["single:a1"]["paired"] == {"team_only": 6, "baseline_only": 0, "team_accuracy": 1.0}
    table = capsys.readouterr().out
    assert "self-consistency (k=5, a0)" in table and "61%–100%" in table


def test_a_rerun_skips_finished_questions_and_retries_failed_ones(tmp_path):
    broken = {"on": True}

    def flaky(request):
        if broken["on"] and asked(request) == "q2":
            return Reply(fault=Fault.http(400, "q2 is broken today"))
        return summing_agent(request)

    with FakeProvider(flaky) as fake:
        assert run_batch(tmp_path, fake, 5) == 2  # one question failed
        first = rows(tmp_path / "out")
        failed = [row for row in first if row["status"] == "failed"]
        assert [row["id"] for row in failed] == ["q2"] and "broken" in failed[0]["error"]
        before = len(fake.requests)
        broken["on"] = False
        assert run_batch(tmp_path, fake, 5) == 0
        again = {asked(body) for body in fake.requests[before:]}
    assert again == {"q2"}  # only the failed question ran again
    latest = {row["id"]: row for row in rows(tmp_path / "out")}
    assert len(latest) == 5 and all(row["status"] == "ok" for row in latest.values())


def test_a_changed_config_is_refused_unless_forced(tmp_path, capsys):
    with FakeProvider(summing_agent) as fake:
        assert run_batch(tmp_path, fake, 2) == 0
        write_team(tmp_path / "team.json", fake.base_url, agents=3)
        tasks, team = tmp_path / "tasks.jsonl", tmp_path / "team.json"
        argv = ["batch", str(tasks), "--config", str(team), "--out", str(tmp_path / "out")]
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "different batch (changed: config)" in err and "--force" in err
        assert main([*argv, "--force"]) == 0


def test_report_prints_the_table_again_and_draws_the_chart(tmp_path, capsys):
    with FakeProvider(summing_agent) as fake:
        assert run_batch(tmp_path, fake, 3, "--baselines", "single") == 0
    capsys.readouterr()
    assert main(["batch", "report", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "single:a1" in out and "team" in out
    png = (tmp_path / "out" / "summary.png").read_bytes()
    assert png.startswith(b"\x89PNG")


def test_without_out_the_batch_goes_under_dot_massgen_and_resumes_there(tmp_path, capsys):
    with FakeProvider(summing_agent) as fake:
        tasks = write_tasks(tmp_path / "sums.jsonl", 2)
        team = write_team(tmp_path / "team.json", fake.base_url)
        assert main(["batch", str(tasks), "--config", str(team)]) == 0
        calls = len(fake.requests)
        assert main(["batch", str(tasks), "--config", str(team)]) == 0
        assert len(fake.requests) == calls  # nothing left to run
    assert len(rows(tmp_path / ".massgen" / "batch" / "sums")) == 2
    assert ".massgen/batch/sums/results.jsonl" in capsys.readouterr().err


def test_report_of_a_folder_without_a_batch_is_one_line(tmp_path, capsys):
    assert main(["batch", "report", str(tmp_path)]) == 1
    assert "no batch in" in capsys.readouterr().err


def test_ctrl_c_keeps_finished_results_and_exits_4(tmp_path):
    with FakeProvider(summing_agent, latency=0.2) as fake:
        tasks = write_tasks(tmp_path / "tasks.jsonl", 40)
        team = write_team(tmp_path / "team.json", fake.base_url)
        out = tmp_path / "out"
        proc = batch_process(tmp_path, str(tasks), "--config", str(team), "--out", str(out))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (out / "results.jsonl").exists() and len(rows(out)) >= 4:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        kept = rows(out)
        assert proc.returncode == 4, err
        assert "interrupted" in err and "resume" in err
        assert 4 <= len(kept) < 40 and all(row["status"] == "ok" for row in kept)
        # Finished questions are not asked again; the rest are, once each.
        before = len(fake.requests)
        assert main(["batch", str(tasks), "--config", str(team), "--out", str(out)]) == 0
        rerun = presentations(fake.requests[before:])
    assert not set(rerun) & {row["id"] for row in kept}
    assert len(rows(out)) == 40 and len({row["id"] for row in rows(out)}) == 40
