"""The recorder writes a turn's log directory from the scripted 3-agent run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from recorded_run_script import FAILURE, FINAL, QUESTION, eventually, index_of

from massgen.core.events import AnyEvent, TextDelta, event_from_dict
from massgen.record import Recorder, coordination_table, new_log_dir, table_from_log


def load(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def record(tmp_path: Path, events: list[AnyEvent], clock=None, **kwargs) -> Recorder:
    extra = {"clock": clock} if clock else {}
    recorder = Recorder(
        tmp_path, question=QUESTION, config_raw=None, config_path=None, cli_args=None, **extra
    )
    for event in events:
        recorder.handle(event)
    return recorder


def answered(status: Any) -> bool:
    return status["agents"]["alpha"]["answer_count"] == 1


@pytest.fixture
def finished(tmp_path: Path, events: list[AnyEvent]) -> Path:
    record(tmp_path, events).close()
    return tmp_path


def test_vote_json_has_tally_and_standing_flags(finished: Path) -> None:
    votes = load(finished / "vote.json")
    assert votes["decided"] is True
    assert (votes["winner"], votes["winner_label"]) == ("beta", "agent2.1")
    assert votes["tally"] == {"agent2.1": 2}
    assert votes["reason"] == "consensus"
    summary = [
        (v["voter"], v["target_label"], v["standing"], v["ended_by"]) for v in votes["votes"]
    ]
    assert summary == [
        ("gamma", "agent1.1", False, "agent2.1"),
        ("alpha", "agent2.1", True, None),
        ("beta", "agent2.1", True, None),
    ]
    first = votes["votes"][0]
    assert (first["voter_label"], first["target"], first["reason"]) == (
        "agent3",
        "alpha",
        "Correct and short.",
    )
    assert first["timestamp"].startswith("2023-11-")


def test_status_json_at_the_end(finished: Path) -> None:
    status = load(finished / "status.json")
    assert status["status"] == "degraded"
    assert status["is_complete"] is True
    assert status["finish_reason"] == "consensus; 1 agent failed"
    assert status["coordination"]["phase"] == "finished"
    agents = status["agents"]
    assert [agents[a]["status"] for a in ("alpha", "beta", "gamma")] == ["done", "done", "failed"]
    assert agents["gamma"]["error"] == FAILURE
    assert agents["gamma"]["vote"] is None
    assert agents["alpha"]["restarts"] == 1
    assert agents["alpha"]["vote"] == {
        "target_label": "agent2.1",
        "reason_preview": "More complete than mine.",
    }
    assert agents["beta"]["latest_answer_label"] == "agent2.1"
    assert agents["beta"]["usage"]["input_tokens"] == 700
    assert agents["beta"]["usage"]["reasoning_tokens"] == 10
    assert status["totals"]["output_tokens"] == 100
    assert status["totals"]["cost_usd"] == pytest.approx(0.003)
    assert status["results"]["winner_label"] == "agent2.1"
    assert status["results"]["final_answer_preview"] == FINAL
    assert status["meta"]["question"] == QUESTION


def test_per_agent_files(finished: Path) -> None:
    assert (finished / "agent_alpha" / "answer_1.txt").read_text() == "Paris is the capital."
    assert (finished / "agent_beta" / "answer_1.txt").read_text() == FINAL
    assert not (finished / "agent_gamma" / "answer_1.txt").exists()
    gamma_votes = load(finished / "agent_gamma" / "votes.json")
    assert [v["standing"] for v in gamma_votes] == [False]
    assert load(finished / "agent_beta" / "votes.json")[0]["target_label"] == "agent2.1"


def test_final_files(finished: Path) -> None:
    assert (finished / "final" / "answer.txt").read_text() == FINAL
    presenter = (finished / "final" / "presenter.txt").read_text()
    assert "winner: beta\n" in presenter
    assert "label: agent2.1\n" in presenter
    assert "status: degraded\n" in presenter
    assert "reason: consensus; 1 agent failed\n" in presenter


def test_events_jsonl_round_trips(finished: Path, events: list[AnyEvent]) -> None:
    lines = (finished / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert [event_from_dict(json.loads(line)) for line in lines] == events
    assert [json.loads(line)["at"] for line in lines] == [e.at for e in events]


def test_coordination_events_skip_stream_chunks(finished: Path) -> None:
    doc = load(finished / "coordination_events.json")
    meta = doc["session_metadata"]
    assert meta["user_prompt"] == QUESTION
    assert meta["agent_ids"] == ["alpha", "beta", "gamma"]
    assert meta["final_winner"] == "beta"
    assert meta["end_time"] is not None
    kinds = [e["event_type"] for e in doc["events"]]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert not {"text", "reasoning", "final_text", "usage", "tool_call_started"} & set(kinds)
    failed = next(e for e in doc["events"] if e["event_type"] == "agent_failed")
    assert failed["agent_id"] == "gamma"
    assert failed["details"] == {"error": FAILURE, "stopped": False}


def test_table_file_matches_the_log(finished: Path, events: list[AnyEvent]) -> None:
    table = (finished / "coordination_table.txt").read_text(encoding="utf-8")
    assert table == table_from_log(finished) == coordination_table(events)
    assert "winner: beta (agent2.1)" in table


def test_execution_metadata(finished: Path) -> None:
    meta = yaml.safe_load((finished / "execution_metadata.yaml").read_text(encoding="utf-8"))
    assert meta["question"] == QUESTION
    assert {"python_version", "massgen_version", "platform", "working_dir", "start_time"} <= set(
        meta
    )


def test_status_is_current_mid_run(tmp_path: Path, events: list[AnyEvent], clock) -> None:
    answer = index_of(events, "answer_published")
    recorder = record(tmp_path, events[: answer + 1], clock=clock)
    # Written by the recorder's writer thread within its pause, without a flush.
    eventually(lambda: load(tmp_path / "status.json"), answered)
    recorder.flush()  # what the thread wrote after that, so the chunk's check below is fair
    status = load(tmp_path / "status.json")
    alpha = status["agents"]["alpha"]
    assert (alpha["status"], alpha["answer_count"], alpha["latest_answer_label"]) == (
        "answered",
        1,
        "agent1.1",
    )
    assert status["agents"]["beta"]["status"] == "streaming"
    assert status["coordination"]["phase"] == "coordinating"
    assert (status["is_complete"], status["status"]) == (False, "running")
    assert status["totals"]["input_tokens"] == 100
    assert eventually(lambda: (tmp_path / "agent_alpha" / "answer_1.txt").exists(), bool)
    # Stream chunks neither rewrite status.json nor flush events.jsonl.
    size = (tmp_path / "events.jsonl").stat().st_size
    recorder.handle(TextDelta(agent="beta", text="chunk"))
    recorder.flush()
    assert load(tmp_path / "status.json") == status
    assert (tmp_path / "events.jsonl").stat().st_size == size
    recorder.close()


def test_interrupted_close_keeps_what_was_decided(tmp_path: Path, events: list[AnyEvent]) -> None:
    cut = index_of(events, "vote_cast", 2)
    record(tmp_path, events[: cut + 1]).close(interrupted=True)
    status = load(tmp_path / "status.json")
    assert (status["status"], status["finish_reason"], status["is_complete"]) == (
        "interrupted",
        "interrupted",
        False,
    )
    assert status["agents"]["gamma"]["status"] == "failed"
    assert status["results"]["tally"] == {"agent2.1": 1}
    votes = load(tmp_path / "vote.json")
    assert (votes["decided"], votes["winner"], votes["tally"]) == (False, None, {"agent2.1": 1})
    assert [v["standing"] for v in votes["votes"]] == [False, True]
    assert (tmp_path / "agent_beta" / "answer_1.txt").read_text() == FINAL
    assert "status: interrupted\n" in (tmp_path / "final" / "presenter.txt").read_text()
    assert not (tmp_path / "final" / "answer.txt").exists()
    assert len((tmp_path / "events.jsonl").read_text().splitlines()) == cut + 1


def test_interrupted_presentation_keeps_partial_answer(
    tmp_path: Path, events: list[AnyEvent]
) -> None:
    cut = index_of(events, "final_text", 1)
    record(tmp_path, events[: cut + 1]).close(interrupted=True)
    assert (tmp_path / "final" / "answer.txt").read_text() == "The capital of France "
    presenter = (tmp_path / "final" / "presenter.txt").read_text()
    assert "winner: beta\n" in presenter and "partial" in presenter
    assert load(tmp_path / "vote.json")["decided"] is True


def test_close_is_idempotent_and_ignores_late_events(
    finished: Path, events: list[AnyEvent]
) -> None:
    recorder = Recorder(
        finished / "again", question=QUESTION, config_raw=None, config_path=None, cli_args=None
    )
    recorder.close()
    recorder.close(interrupted=True)
    recorder.handle(events[0])
    assert load(finished / "again" / "status.json")["status"] == "incomplete"
    assert (finished / "again" / "events.jsonl").read_text() == ""


def test_no_temp_files_left(finished: Path) -> None:
    leftovers = [p for p in finished.rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_new_log_dir_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MASSGEN_LOG_BASE_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    first, second = new_log_dir(), new_log_dir(turn=2)
    assert first.parent.parent == tmp_path / ".massgen" / "massgen_logs"
    assert first.name == "turn_1" and second.name == "turn_2"
    assert first.parent != second.parent
    assert first.parent.name.startswith("log_") and len(first.parent.name) == len(
        "log_20240101_120000_000000"
    )


def test_new_log_dir_base_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASSGEN_LOG_BASE_DIR", str(tmp_path / "env"))
    assert new_log_dir().parent.parent == tmp_path / "env"
    assert new_log_dir(tmp_path / "explicit").parent.parent == tmp_path / "explicit"
