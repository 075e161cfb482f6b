"""Was the team worth it? One plain sentence per baseline, from the summary's numbers.

A difference counts as a win or a loss only when the paired questions say so: an exact
McNemar test on the questions where exactly one of the two was right (two-sided, 5%).
Tokens are compared per question, so "at equal tokens" is said only where it is true.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from massgen.batch.work import SC, TEAM

SIGNIFICANT = 0.05


def mcnemar(team_only: int, baseline_only: int) -> float:
    """The exact two-sided p-value of a paired difference (1.0 with no discordant pair)."""
    n = team_only + baseline_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(team_only, baseline_only) + 1))
    return min(1.0, 2 * tail / 2**n)


def verdicts(methods: Sequence[Mapping[str, Any]]) -> list[str]:
    """A sentence per baseline, the team against it."""
    team = next((m for m in methods if m["method"] == TEAM), None)
    if team is None or team["accuracy"] is None:
        return []
    return [_sentence(team, m) for m in methods if m["method"] != TEAM and m.get("paired")]


def _sentence(team: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    name = other["method"]
    if other["accuracy"] is None:
        return f"{name}: nothing scored to compare"
    paired = other["paired"]
    # On the questions both answered: a baseline stopped early has fewer than the team.
    mine = paired.get("team_accuracy", team["accuracy"])
    theirs = other["accuracy"]
    if mine is None:
        return f"{name}: nothing scored to compare"
    p = mcnemar(paired["team_only"], paired["baseline_only"])
    scores = f"{_pct(mine)} vs {_pct(theirs)}, {other['n']} questions, p={p:.2f}"
    tokens = _tokens(team["tokens_per_question"], other["tokens_per_question"])
    if mine > theirs and p < SIGNIFICANT:
        return f"the team beat {name} ({scores}), {tokens}"
    if mine > theirs:
        return f"the team scored above {name} but not significantly ({scores}), {tokens}"
    if mine < theirs and p < SIGNIFICANT:
        return f"the team did worse than {name} ({scores}), {tokens}"
    at_equal = name == SC and team["tokens_per_question"] <= other["tokens_per_question"]
    where = " at equal tokens" if at_equal else ""
    if mine == theirs:
        return f"the team did not beat {name}{where}: it matched it ({scores}), {tokens}"
    return f"the team did not beat {name}{where}: it scored below it ({scores}), {tokens}"


def _tokens(team: float, other: float) -> str:
    if not other:
        return f"using {team:,.0f} tokens per question"
    ratio = team / other
    if 0.9 <= ratio <= 1.1:
        return "at about the same tokens per question"
    return f"using {ratio:.1f}x its tokens per question"


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"
