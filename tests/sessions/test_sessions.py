"""Session storage: whole turns or none, history with unfinished turns marked, listing."""

from __future__ import annotations

import json

import pytest

from massgen.coordination.prompts import Turn
from massgen.core.errors import ConfigError
from massgen.core.status import Status
from massgen.sessions import SavedTurn, Session, list_sessions, listing_text


def turn(number: int, question: str, answer: str, status: Status = Status.OK, **extra) -> SavedTurn:
    return SavedTurn(
        number=number,
        question=question,
        answer=answer,
        status=status,
        reason=extra.pop("reason", "consensus"),
        started=1_700_000_000.0 + number,
        finished=1_700_000_010.0 + number,
        **extra,
    )


def test_a_saved_turn_reads_back_whole(tmp_path):
    session = Session("s1", tmp_path)
    saved = turn(
        1,
        "What is 6 times 7?",
        "42.",
        winner="careful",
        winner_label="agent1.1",
        tally={"agent1.1": 2},
        votes=[{"voter": "b", "target": "careful", "target_label": "agent1.1", "reason": "ok"}],
        usage={"careful": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5}},
    )
    session.save(saved)
    folder = tmp_path / "s1" / "turn_1"
    assert (folder / "question.txt").read_text() == "What is 6 times 7?\n"
    assert (folder / "answer.txt").read_text() == "42.\n"
    assert json.loads((folder / "metadata.json").read_text())["winner_label"] == "agent1.1"
    assert Session.open("s1", tmp_path).turns() == [saved]
    assert saved.total_tokens() == 15 and saved.total_cost() == 0.5
    assert not [p for p in (tmp_path / "s1").iterdir() if p.name.startswith(".")]


def test_turns_are_numbered_in_order_and_history_follows(tmp_path):
    session = Session("s1", tmp_path)
    session.save(turn(1, "q1", "a1"))
    assert session.next_number() == 2
    session.save(turn(1, "q2", "a2"))  # a stale number moves on instead of overwriting
    assert [t.number for t in session.turns()] == [1, 2]
    assert session.history() == [Turn("q1", "a1"), Turn("q2", "a2")]


def test_unfinished_turns_stay_in_the_history_marked_as_such(tmp_path):
    session = Session("s1", tmp_path)
    session.save(turn(1, "q1", "partial text", status=Status.INTERRUPTED))
    session.save(turn(2, "q2", "", status=Status.INTERRUPTED))
    session.save(turn(3, "q3", "best so far", status=Status.TIMEOUT))
    history = session.history()
    assert history[0] == Turn(
        "q1",
        "[partial answer: the turn was interrupted by the user before the team finished]\n"
        "partial text",
    )
    assert (
        history[1].answer == "[no answer: the turn was interrupted by the user before any answer]"
    )
    assert history[2].answer.startswith("[partial answer: the turn was timeout")


def test_a_crash_mid_write_leaves_no_half_turn(tmp_path):
    session = Session("s1", tmp_path)
    session.save(turn(1, "q1", "a1"))
    # What a crash leaves: a staging folder never renamed, and a turn folder emptied by hand.
    staging = tmp_path / "s1" / ".turn_2.abcd.tmp"
    staging.mkdir()
    (staging / "question.txt").write_text("q2\n")
    (tmp_path / "s1" / "turn_3").mkdir()
    (tmp_path / "s1" / "turn_4").mkdir()
    (tmp_path / "s1" / "turn_4" / "metadata.json").write_text('{"number": 4, "quest')
    assert [t.question for t in session.turns()] == ["q1"]
    assert session.next_number() == 2


def test_the_summary_reads_without_tools(tmp_path):
    session = Session("s1", tmp_path, config="team.yaml")
    session.save(turn(1, "What is 6 times 7?", "42.", winner="careful", winner_label="agent1.1"))
    session.save(
        turn(2, "Add 8", "50 so far", status=Status.INTERRUPTED, reason="interrupted by the user")
    )
    text = (tmp_path / "s1" / "SESSION_SUMMARY.txt").read_text()
    assert text.startswith("massgen session s1\nstarted ")
    assert "2 turn(s) · config team.yaml" in text
    assert "· ok · winner careful (agent1.1) ──\nQ: What is 6 times 7?\nA: 42.\n" in text
    assert (
        "· interrupted ──\nQ: Add 8\n(interrupted: interrupted by the user)\nA: 50 so far\n" in text
    )


def test_listing_shows_id_start_turns_and_first_question(tmp_path):
    assert list_sessions(tmp_path / "none") == []
    assert "no sessions yet" in listing_text([])
    older, newer = (
        Session("20240101_000000_aaaa", tmp_path),
        Session("20240102_000000_bbbb", tmp_path),
    )
    newer.save(turn(1, "newer question", "a"))
    older.save(turn(1, "older question", "a"))
    older.save(turn(2, "follow-up", "b"))  # used last, so it is the one to continue
    Session("20240103_000000_cccc", tmp_path)  # never saved a turn: not listed
    sessions = list_sessions(tmp_path)
    assert [(s.id, s.turns, s.first_question) for s in sessions] == [
        ("20240101_000000_aaaa", 2, "older question"),
        ("20240102_000000_bbbb", 1, "newer question"),
    ]
    lines = listing_text(sessions).splitlines()
    assert lines[0].split() == ["session", "started", "turns", "first", "question"]
    assert lines[1].startswith("20240101_000000_aaaa") and lines[1].endswith("2  older question")
    assert Session.latest(tmp_path).id == "20240101_000000_aaaa"


def test_unknown_or_missing_sessions_are_user_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"no session 'nope'.*--list-sessions"):
        Session.open("nope", tmp_path)
    with pytest.raises(ConfigError):
        Session.open("../escape", tmp_path)
    with pytest.raises(ConfigError, match="no session to continue"):
        Session.latest(tmp_path)


def test_new_sessions_get_sortable_unique_ids(tmp_path):
    a, b = Session.new(tmp_path), Session.new(tmp_path)
    assert a.id != b.id and a.id[:8].isdigit() and not (tmp_path / a.id).exists()


# turn_1/metadata.json as massgen wrote it before a turn was an `Outcome` with its question.
OLD_METADATA = {
    "number": 1,
    "question": "Q?",
    "answer": "A.",
    "status": "degraded",
    "reason": "1 agent failed",
    "winner": "a",
    "winner_label": "agent1.1",
    "tally": {"agent1.1": 1},
    "votes": [],
    "usage": {},
    "failed_agents": {"b": "AuthFailed"},
    "log_dir": None,
    "started": 1.0,
    "finished": 2.0,
}


def test_a_turn_saved_by_an_earlier_massgen_reads_back(tmp_path):
    saved = SavedTurn(
        number=1,
        question="Q?",
        answer="A.",
        status=Status.DEGRADED,
        reason="1 agent failed",
        winner="a",
        winner_label="agent1.1",
        tally={"agent1.1": 1},
        failed_agents={"b": "AuthFailed"},
        started=1.0,
        finished=2.0,
    )
    Session("s1", tmp_path).save(saved)
    metadata = tmp_path / "s1" / "turn_1" / "metadata.json"
    assert json.loads(metadata.read_text()) == OLD_METADATA  # the same keys and values
    metadata.write_text(json.dumps(OLD_METADATA, indent=2))
    assert Session.open("s1", tmp_path).turns() == [saved]
