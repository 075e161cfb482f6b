"""Agreement ends the debate: independent first answers that say the same thing.

Every agent's first answer is written before it reads any other (`Orchestrator` holds an
agent that has answered until its peers have too), so first answers are independent
samples. When all of them agree under the run's equivalence (`orchestrator.agreement`:
the normalised text, the last number, or the option letter), a vote has nothing to decide
and can only lose what they share: peers' reasoning turns correct answers wrong and
agents drift to a majority (Cost of Consensus, arXiv 2605.00914). So the run ends there,
with the earliest of them as written: no vote, no presentation.

How many first answers agreed is also what a run reports ("3 of 3 agreed"), whether or
not it ended the run, so a user can tell a unanimous answer from a contested one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from massgen.coordination.board import Answer
from massgen.core.answers import EQUIVALENCES

# What a run reports agreement by when `agreement: none` (it then ends nothing).
REPORTED_BY = "exact"


@dataclass(frozen=True, slots=True)
class Agreement:
    """How the first answers in agree: the largest group saying one thing."""

    rule: str  # the equivalence: exact, numeric or choice
    value: str | None  # what the largest group says, as the rule reads it
    agreeing: tuple[str, ...]  # its answers' labels, in order of publication
    first_answers: int  # first answers compared
    ended_run: bool = False  # it ended the run before any vote
    # It ended the run as a majority of this many live agents (`agreement_quorum:
    # majority`), the others' first answers still to come or saying something else.
    majority_of: int = 0

    @property
    def unanimous(self) -> bool:
        return self.first_answers > 1 and len(self.agreeing) == self.first_answers

    def describe(self) -> str:
        """ "3 of 3 first answers agree (numeric: 72)", "2 of 3 first answers agree (same
        text)", "the 3 first answers all differ (numeric)"."""
        count, total = len(self.agreeing), self.first_answers
        if total < 2:
            return "one first answer"
        if count < 2:
            return f"the {total} first answers all differ ({self.rule})"
        said = "same text" if self.rule == "exact" else f"{self.rule}: {_short(self.value)}"
        if self.majority_of:
            return f"{count} of {self.majority_of} agents' first answers agree ({said}), a majority"
        return f"{count} of {total} first answers agree ({said})"


def first_answers(answers: Sequence[Answer]) -> list[Answer]:
    """Each agent's first answer, in order of publication."""
    return sorted((a for a in answers if a.version == 1), key=lambda a: a.seq)


def measure(answers: Sequence[Answer], rule: str) -> Agreement | None:
    """How the first answers among `answers` agree under `rule` (`none`: reported by
    exact text); None with no first answers."""
    firsts = first_answers(answers)
    if not firsts:
        return None
    rule = rule if rule in EQUIVALENCES else REPORTED_BY
    extract = EQUIVALENCES[rule]
    values = [extract(a.content) for a in firsts]
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return Agreement(rule, None, (), len(firsts))
    top = max(counts.values())
    value = next(v for v in values if v is not None and counts[v] == top)  # first seen
    agreeing = tuple(a.label for a, v in zip(firsts, values, strict=True) if v == value)
    return Agreement(rule, value, agreeing, len(firsts))


def ends_run(
    answers: Sequence[Answer],
    live: Sequence[str],
    rule: str,
    failed: Collection[str] = frozenset(),
    quorum: str = "all",
) -> Agreement | None:
    """The agreement that ends the run now, or None: `rule` is not `none`, at least two
    live agents, nothing newer than a first answer exists yet, none of the agreeing
    answers failed its check (`failed`: labels), and either every live agent's first
    answer is in and all agree (`quorum: all`), or more than half of the live agents'
    first answers already agree (`quorum: majority`: the rest cannot outvote them)."""
    if rule not in EQUIVALENCES or len(live) < 2:
        return None
    mine = [a for a in answers if a.agent in live]
    if any(a.version != 1 for a in mine):
        return None
    found = measure(mine, rule)
    if found is None or any(a in failed for a in found.agreeing):
        return None
    if quorum == "majority" and len(found.agreeing) * 2 > len(live):
        agreeing = found.agreeing
        return Agreement(found.rule, found.value, agreeing, found.first_answers, True, len(live))
    if sorted(a.agent for a in mine) != sorted(live) or not found.unanimous:
        return None
    return Agreement(found.rule, found.value, found.agreeing, found.first_answers, True)


def _short(value: str | None, limit: int = 60) -> str:
    text = " ".join((value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
