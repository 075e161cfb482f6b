"""The board's one rule: a vote stands while no answer newer than its voter saw exists."""

from __future__ import annotations

import pytest

from massgen.coordination.board import Board, Vote
from massgen.coordination.labels import Labels

IDS = ["alice", "bob", "carol"]


@pytest.fixture
def board() -> Board:
    return Board(IDS, Labels(IDS, seed=1))


def test_answers_get_versioned_labels_and_a_team_wide_order(board):
    first, _ = board.publish("bob", "v1")
    board.publish("alice", "a1")
    third, _ = board.publish("bob", "v2")
    assert (third.version, third.label) == (2, board.labels.label("bob", 2))
    assert [a.seq for a in board.all_answers()] == [1, 2, 3]
    assert board.latest()["bob"] is third and first is not third
    assert board.versions() == {"alice": 1, "bob": 2, "carol": 0}
    assert board.total_answers == 3 and board.answer_count("carol") == 0


def test_a_new_answer_retires_every_vote_that_did_not_see_it(board):
    answer, _ = board.publish("bob", "v1")
    seen = board.versions()
    vote = Vote("alice", "bob", answer.label, "good", seen)
    board.cast(vote)
    assert board.standing_votes() == [vote]
    _, retired = board.publish("carol", "c1")
    assert retired == [vote]
    assert board.vote_of("alice") is None and board.standing_votes() == []


def test_a_vote_that_saw_the_newest_answers_survives_and_a_stale_one_is_refused(board):
    board.publish("bob", "v1")
    board.publish("carol", "c1")
    fresh = Vote("alice", "bob", "x", "", board.versions())
    board.cast(fresh)
    _, retired = board.publish("alice", "a1")  # alice's own answer: she did not see it
    assert retired == [fresh]
    stale = Vote("bob", "carol", "y", "", {"bob": 1, "carol": 1})
    assert not board.stands(stale)
    with pytest.raises(ValueError):
        board.cast(stale)
