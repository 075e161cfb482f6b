"""`massgen batch ... --replay OUTDIR`: a recorded batch rerun from its journals makes no
model call and writes the same results.jsonl, byte for byte; the summary counts the calls."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
from batch_support import asked, summing_agent, write_tasks, write_team

from massgen.batch.replay import ResultsWriter, read_calls
from massgen.cli import main
from massgen.testing.fake_provider import FakeProvider, FakeUsage, Reply

pytestmark = pytest.mark.usefixtures("in_tmp")


def jittery(request: dict):
    """The summing team, answering after a random delay: jobs and agents finish in an
    order that differs from run to run."""
    time.sleep(random.uniform(0, 0.05))
    return summing_agent(request)


def batch(tmp_path, tasks, team, out, *extra):
    argv = ["batch", str(tasks), "--config", str(team), "--out", str(tmp_path / out)]
    return main([*argv, "--baselines", "single,self-consistency", "--concurrency", "3", *extra])


def methods(tmp_path, out) -> dict:
    summary = json.loads((tmp_path / out / "summary.json").read_text())
    return {entry["method"]: entry for entry in summary["methods"]}


def test_an_identical_replay_makes_no_call_and_writes_the_same_bytes(tmp_path, capsys):
    tasks = write_tasks(tmp_path / "tasks.jsonl", 4)
    with FakeProvider(jittery) as fake:
        team = write_team(tmp_path / "team.json", fake.base_url)
        assert batch(tmp_path, tasks, team, "rec") == 0
        recorded = len(fake.requests)
        assert batch(tmp_path, tasks, team, "again", "--replay", str(tmp_path / "rec")) == 0
        assert len(fake.requests) == recorded  # not one call
    before = (tmp_path / "rec" / "results.jsonl").read_bytes()
    assert (tmp_path / "again" / "results.jsonl").read_bytes() == before
    rec, again = methods(tmp_path, "rec"), methods(tmp_path, "again")
    assert sum(e["live_calls"] for e in rec.values()) == recorded
    assert rec["team"]["live_calls"] == 4 * 5 and rec["self-consistency"]["live_calls"] == 4 * 5
    assert all(e["replayed_calls"] == 0 for e in rec.values())
    assert all(e["live_calls"] == 0 for e in again.values())
    assert {m: e["replayed_calls"] for m, e in again.items()} == {
        m: e["live_calls"] for m, e in rec.items()
    }
    assert f"model calls: 0 live, {recorded} replayed" in capsys.readouterr().err
    # Its own journals are a record as well.
    assert batch(tmp_path, tasks, team, "third", "--replay", str(tmp_path / "again")) == 0
    assert (tmp_path / "third" / "results.jsonl").read_bytes() == before


def costly_q2_team(request: dict) -> Reply:
    """The summing team, whose calls on q2 (team calls offer tools) cost 60 tokens, not 20:
    the team's mean tokens, and so self-consistency's k, depend on which questions count."""
    reply = summing_agent(request)
    if request.get("tools") and asked(request) == "q2":
        return Reply(text=reply.text, tool_calls=reply.tool_calls, usage=FakeUsage(10, 50))
    return reply


def test_a_batch_recorded_in_two_parts_replays_with_the_k_it_used(tmp_path):
    # Recorded as two questions, then resumed to three: k is fixed by the first part (5).
    # Counted afresh over all three it would be 8, and the replay would sample anew.
    with FakeProvider(costly_q2_team) as fake:
        team = write_team(tmp_path / "team.json", fake.base_url)
        assert batch(tmp_path, write_tasks(tmp_path / "two.jsonl", 2), team, "rec") == 0
        three = write_tasks(tmp_path / "three.jsonl", 3)
        assert batch(tmp_path, three, team, "rec", "--force") == 0
        recorded = len(fake.requests)
        assert batch(tmp_path, three, team, "again", "--replay", str(tmp_path / "rec")) == 0
        assert len(fake.requests) == recorded
    assert methods(tmp_path, "again")["self-consistency"]["k"] == 5
    before = (tmp_path / "rec" / "results.jsonl").read_bytes()
    assert (tmp_path / "again" / "results.jsonl").read_bytes() == before


def test_new_questions_go_to_the_model_and_the_rest_is_replayed(tmp_path):
    with FakeProvider(summing_agent) as fake:
        team = write_team(tmp_path / "team.json", fake.base_url)
        assert batch(tmp_path, write_tasks(tmp_path / "two.jsonl", 2), team, "rec") == 0
        recorded = len(fake.requests)
        three = write_tasks(tmp_path / "three.jsonl", 3)
        assert batch(tmp_path, three, team, "more", "--replay", str(tmp_path / "rec")) == 0
        asked = fake.requests[recorded:]
    by = methods(tmp_path, "more")
    # q2's team run and its single calls are new; k stays 5, but self-consistency's
    # request differs by nothing: its samples for q0 and q1 are replayed.
    assert by["team"]["live_calls"] == 5 and by["team"]["replayed_calls"] == 10
    assert by["single:a0"]["live_calls"] == 1 and by["single:a0"]["replayed_calls"] == 2
    assert len(asked) == sum(e["live_calls"] for e in by.values())
    assert all("q2" in json.dumps(body) for body in asked)


def recorded_batch(tmp_path: Path, keys: list[tuple[str, str]]) -> tuple[Path, Path]:
    """A recorded batch's directory whose results.jsonl holds one ok row per (id, method),
    in that order, and an empty directory to replay it into."""
    recorded, out = tmp_path / "rec", tmp_path / "out"
    recorded.mkdir()
    out.mkdir()
    lines = [json.dumps({"id": i, "method": m, "status": "ok"}) for i, m in keys]
    (recorded / "results.jsonl").write_text("\n".join(lines) + "\n")
    return recorded, out


def written(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").open()]


def test_rows_are_written_in_the_recorded_order_and_held_ones_flushed_at_close(tmp_path):
    recorded, out = recorded_batch(tmp_path, [("q0", "team"), ("q1", "team"), ("q2", "team")])
    writer = ResultsWriter(out, recorded)
    for tid in ("q1", "new", "q0"):
        writer.append(
            {"id": tid, "method": "team", "calls": {"live_calls": 1, "replayed_calls": 0}}
        )
    # q1 waited for q0; a new one does not wait.
    assert [row["id"] for row in written(out)] == ["new", "q0", "q1"]
    writer.append({"id": "q3", "method": "team"})
    writer.close()  # q2 never came: nothing stays held
    assert [row["id"] for row in written(out)] == ["new", "q0", "q1", "q3"]
    assert all("calls" not in row for row in written(out))
    assert len(read_calls(out)) == 3


def test_a_row_does_not_wait_for_a_recorded_method_this_batch_does_not_run(tmp_path):
    # Recorded with a single baseline first; replayed with the team alone, the team's row
    # must not be held (until the end of the batch, or lost to a kill) for that single.
    recorded, out = recorded_batch(tmp_path, [("q0", "single:a0"), ("q0", "team"), ("q1", "team")])
    writer = ResultsWriter(out, recorded, (), expected={("q0", "team"), ("q1", "team")})
    writer.append({"id": "q0", "method": "team"})
    assert [row["id"] for row in written(out)] == ["q0"]
    writer.close()


def test_replay_needs_a_recorded_batch_and_another_out(tmp_path, capsys):
    tasks = write_tasks(tmp_path / "tasks.jsonl", 1)
    team = write_team(tmp_path / "team.json", "http://127.0.0.1:9/v1")
    assert batch(tmp_path, tasks, team, "out", "--replay", str(tmp_path / "nothing")) == 1
    assert "no recorded batch" in capsys.readouterr().err
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.jsonl").write_text("")
    assert batch(tmp_path, tasks, team, "out", "--replay", str(tmp_path / "out")) == 1
    assert "the same directory" in capsys.readouterr().err


def test_single_baselines_replay_their_members_first_answers_from_a_team_only_batch(
    tmp_path, capsys
):
    # A free-text member's first answer in the team is the single call's request, byte
    # for byte: a batch recorded with the team alone gives the singles for no call.
    tasks = write_tasks(tmp_path / "tasks.jsonl", 3)
    with FakeProvider(summing_agent) as fake:
        team = json.loads(write_team(tmp_path / "team.json", fake.base_url).read_text())
        for agent in team["agents"]:
            agent["backend"]["structured_actions"] = True
        team["orchestrator"] = {"when_split": "rank"}
        (tmp_path / "team.json").write_text(json.dumps(team))
        argv = ["batch", str(tasks), "--config", str(tmp_path / "team.json")]
        assert main([*argv, "--out", str(tmp_path / "rec")]) == 0
        recorded = len(fake.requests)
        said = capsys.readouterr()
        assert "ranked without a vote (when_split: rank): 3 runs" in said.out + said.err
        replay = ["--replay", str(tmp_path / "rec"), "--baselines", "single"]
        assert main([*argv, "--out", str(tmp_path / "singles"), *replay]) == 0
        assert len(fake.requests) == recorded  # not one call
    singles = methods(tmp_path, "singles")
    assert {m: (e["live_calls"], e["replayed_calls"]) for m, e in singles.items()} == {
        "team": (0, 6),
        "single:a0": (0, 3),
        "single:a1": (0, 3),
    }
    # m1 alone is off by one, and so is its first answer in the team (the same call).
    assert singles["single:a0"]["accuracy"] == 1.0 and singles["single:a1"]["accuracy"] == 0.0
