"""Choosing the winner from standing votes, with a deterministic, stated tie-break.

Self-preference is a measured judge bias (models rate their own output higher), so by
default a vote for one's own answer only breaks ties between peer votes.

With a `verifier:`, checked answers win: answers are ranked by their check first (passed,
then unchecked, then failed; `core/checks.py`), then by votes. A failing answer never
beats a passing one, whatever the votes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from massgen.coordination.board import Answer, Board
from massgen.core.checks import Check, rank


@dataclass(frozen=True, slots=True)
class Decision:
    winner: Answer | None
    tally: dict[str, int]  # answer label -> standing votes counted for it
    tie_break: str | None
    reasons: tuple[str, ...]  # the reasons given by the winner's voters


def decide(
    board: Board, self_votes: str = "tiebreak", checks: Mapping[str, Check] | None = None
) -> Decision:
    """`checks`: the verdicts by answer label when the run has a verifier (an answer
    without one ranks as unchecked); None: votes alone decide."""
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

    def checked(answer: Answer) -> int:
        return 0 if checks is None else rank(checks.get(answer.label))

    def order(answer: Answer) -> tuple[int, int, int, int]:
        # Its check, more peer votes, then more self votes, then the earliest published.
        return (checked(answer), -peer[answer.agent], -own[answer.agent], answer.seq)

    ordered = sorted(latest.values(), key=order)
    winner = ordered[0]
    tally = {a.label: peer[a.agent] + own[a.agent] for a in ordered}
    reasons = tuple(v.reason for v in votes if v.target == winner.agent and v.reason)
    same_check = [a for a in ordered if checked(a) == checked(winner)]
    rule = _tie_break(same_check, peer, own)
    outvoted = _checks_rule(ordered, tally, checks)
    tie_break = "; ".join(part for part in (outvoted, rule) if part) or None
    return Decision(winner, tally, tie_break, reasons)


def _checks_rule(
    ordered: list[Answer], tally: dict[str, int], checks: Mapping[str, Check] | None
) -> str | None:
    """Why the winner won over answers with votes, as many as it has or more: their
    checks ranked lower."""
    if checks is None:
        return None
    best = ordered[0]
    beaten = [
        a
        for a in ordered[1:]
        if tally[a.label] >= max(tally[best.label], 1)
        and rank(checks.get(a.label)) > rank(checks.get(best.label))
    ]
    if not beaten:
        return None
    verdict = checks[best.label].verdict if best.label in checks else "unchecked"
    others = ", ".join(
        f"{a.label} ({tally[a.label]} vote(s), "
        f"{checks[a.label].verdict if a.label in checks else 'unchecked'})"
        for a in beaten
    )
    return (
        f"checked answers win: {best.label} ({verdict}) chosen over {others}; a failing "
        "answer never beats a passing one, whatever the votes"
    )


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
