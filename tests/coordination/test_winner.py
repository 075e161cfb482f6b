"""The winner: most peer votes; self-votes only break ties by default; ties are stated."""

from __future__ import annotations

from massgen.coordination.board import Board, Vote
from massgen.coordination.labels import Labels
from massgen.coordination.winner import decide

IDS = ["alice", "bob", "carol"]


def board_with(votes: list[tuple[str, str]], order=("alice", "bob", "carol")) -> Board:
    board = Board(IDS, Labels(IDS, seed=3))
    for agent in order:
        board.publish(agent, f"{agent}'s answer")
    for voter, target in votes:
        label = board.latest()[target].label
        board.cast(Vote(voter, target, label, f"{voter} likes {target}", board.versions()))
    return board


def test_no_answers_no_winner():
    assert decide(Board(IDS, Labels(IDS, seed=3))).winner is None


def test_most_peer_votes_wins_and_its_voters_reasons_come_along():
    decision = decide(board_with([("alice", "bob"), ("carol", "bob"), ("bob", "alice")]))
    assert decision.winner.agent == "bob" and decision.tie_break is None
    assert decision.reasons == ("alice likes bob", "carol likes bob")
    assert sum(decision.tally.values()) == 3


def test_a_self_vote_only_breaks_a_tie_by_default():
    votes = [("alice", "bob"), ("bob", "carol"), ("carol", "carol")]
    decision = decide(board_with(votes))
    assert decision.winner.agent == "carol"
    assert "its own author" in decision.tie_break
    assert decide(board_with(votes), self_votes="exclude").winner.agent == "bob"  # earliest


def test_self_votes_count_in_full_when_asked():
    votes = [("alice", "alice"), ("bob", "alice"), ("carol", "bob")]
    assert (
        decide(board_with(votes), self_votes="count").tally[
            board_with(votes).latest()["alice"].label
        ]
        == 2
    )


def test_a_plain_tie_goes_to_the_earliest_answer_and_says_so():
    votes = [("alice", "carol"), ("carol", "bob")]
    decision = decide(board_with(votes, order=("carol", "bob", "alice")))
    assert decision.winner.agent == "carol"
    assert "earliest-published" in decision.tie_break
