"""Settling a split without a vote (`orchestrator.when_split: rank`).

When the first answers reach no agreement, the team normally votes. Measured on the
offline team (`docs/quality.md`), small models vote by position, not by reading: 10 of
15 votes came with no reasoning, most for the first answer shown, and the vote lost a
right answer that the first answers had. With `rank`, the run ends once every live
agent's first answer is in (and checked), and the answer is ranked instead, by what the
run knows without asking anyone:

1. its check, with a `verifier:` (passed, then unchecked, then failed; `core/checks.py`);
2. how many first answers say the same thing under the run's `agreement` equivalence;
3. the member's place in the config: the user lists the member they trust most first.

The winner is presented as written, like an agreed answer: no vote, no presentation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from massgen.coordination.agreement import first_answers
from massgen.coordination.board import Answer
from massgen.core.answers import EQUIVALENCES
from massgen.core.checks import Check, rank


@dataclass(frozen=True, slots=True)
class Ranked:
    """The answer a split was settled on, and why it ranked first."""

    winner: Answer
    why: str


def settle(
    answers: Sequence[Answer],
    live: Sequence[str],
    rule: str,
    checks: Mapping[str, Check] | None,
    order: Sequence[str],
) -> Ranked | None:
    """The ranked winner once every live agent's first answer is in and nothing newer
    exists; None before that. `order`: the members' ids as the config lists them."""
    mine = [a for a in answers if a.agent in live]
    if not mine or any(a.version != 1 for a in mine):
        return None
    firsts = first_answers(mine)
    if sorted(a.agent for a in firsts) != sorted(live):
        return None
    extract = EQUIVALENCES.get(rule)
    values = [extract(a.content) if extract else None for a in firsts]
    backing = Counter(v for v in values if v is not None)
    keys = [
        (
            rank(checks.get(answer.label)) if checks is not None else 0,
            -backing[value] if value is not None else 0,
            order.index(answer.agent),
        )
        for answer, value in zip(firsts, values, strict=True)
    ]
    ranked = sorted(zip(keys, firsts, values, strict=True), key=lambda entry: entry[0])
    best_key, winner, said = ranked[0]
    # What set it apart from the best answer that says something else.
    others = [key for key, _, value in ranked[1:] if value is None or value != said]
    return Ranked(winner, _why(best_key, others[0] if others else None))


def first_passing(
    answers: Sequence[Answer],
    live: Sequence[str],
    checks: Mapping[str, Check],
    order: Sequence[str],
) -> Ranked | None:
    """`first_answers: as_needed` with a verifier and no equivalence: the members answer one
    at a time in config order, and the first answer to pass its check wins, since no later
    one could rank above it (passed first, then config order). None until that is known."""
    firsts = {answer.agent: answer for answer in first_answers(answers)}
    for agent in order:
        if agent not in live:
            continue
        answer = firsts.get(agent)
        if answer is None:
            return None
        check = checks.get(answer.label)
        if check is not None and check.passed:
            return Ranked(answer, "the first in the config's order to pass its check")
    return None


def _why(best: tuple[int, int, int], other: tuple[int, int, int] | None) -> str:
    """Its check, its backing, or only its member's place in the config."""
    if other is None:
        return "every first answer says the same"
    if best[0] != other[0]:
        return "its check ranked highest"
    if best[1] != other[1]:
        return f"{-best[1]} first answers say the same"
    return "first in the config's member order"
