"""Choosing the winner from standing votes, with a deterministic, stated tie-break.

Self-preference is a measured judge bias (models rate their own output higher), so by
default a vote for one's own answer only breaks ties between peer votes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from massgen.coordination.board import Answer, Board


@dataclass(frozen=True, slots=True)
class Decision:
    winner: Answer | None
    tally: dict[str, int]  # answer label -> standing votes counted for it
    tie_break: str | None
    reasons: tuple[str, ...]  # the reasons given by the winner's voters


def decide(board: Board, self_votes: str = "tiebreak") -> Decision:
    latest = board.latest()
    if not latest:
        return Decision(None, {}, None, ())
    votes = board.standing_votes()
    peer = Counter(v.target for v in votes if v.target != v.voter)
    own = Counter(v.target for v in votes if v.target == v.voter)
    if self_votes == "count":
        peer, own = peer + own, Counter()
    elif self_votes == "exclude":
        own = Counter()

    def rank(answer: Answer) -> tuple[int, int, int]:
        # More peer votes, then more self votes, then the answer published earliest.
        return (-peer[answer.agent], -own[answer.agent], answer.seq)

    ordered = sorted(latest.values(), key=rank)
    winner = ordered[0]
    tally = {a.label: peer[a.agent] + own[a.agent] for a in ordered}
    reasons = tuple(v.reason for v in votes if v.target == winner.agent and v.reason)
    return Decision(winner, tally, _tie_break(ordered, peer, own), reasons)


def _tie_break(ordered: list[Answer], peer: Counter, own: Counter) -> str | None:
    best = ordered[0]
    tied = [a for a in ordered if peer[a.agent] == peer[best.agent]]
    if len(tied) == 1:
        return None
    names = ", ".join(a.label for a in tied)
    count = peer[best.agent]
    if sum(own[a.agent] == own[best.agent] for a in tied) == 1:
        rule = "the one its own author also stood by"
    else:
        rule = "the earliest-published answer"
    return f"tied at {count} peer vote(s) between {names}: chose {rule} ({best.label})"
