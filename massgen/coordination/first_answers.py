"""Who writes a first answer when (`orchestrator.first_answers`).

"together": every member at once. "as_needed" (adaptive consistency): with the majority
quorum and an equivalence to agree by, the first members in config order that can make a
majority answer at once; the others wait until those first answers are in and are asked
only when they did not agree (the run ends first when they do). With a verifier,
`when_split: rank` and no equivalence (code), one member at a time in config order, each
waiting for everyone before it: the first passing answer ends the run
(`ranking.first_passing`). A team with workspaces always answers together.
"""

from __future__ import annotations

from collections.abc import Sequence

from massgen.config.schema import OrchestratorConfig
from massgen.core.answers import EQUIVALENCES


def waits_for(
    agent: str,
    order: Sequence[str],
    settings: OrchestratorConfig,
    *,
    checked: bool,
    workspaces: bool,
) -> list[str]:
    """The members whose first answers `agent` waits for before writing its own.
    `order`: the members' ids as the config lists them; `checked`: the run has a verifier."""
    if settings.first_answers != "as_needed" or workspaces:
        return []
    place = order.index(agent)
    if one_by_one(settings, checked):
        return list(order[:place])
    if settings.agreement_quorum != "majority" or settings.agreement not in EQUIVALENCES:
        return []
    majority = len(order) // 2 + 1
    return [] if place < majority else list(order[:majority])


def one_by_one(settings: OrchestratorConfig, checked: bool) -> bool:
    """`as_needed` with a verifier and no equivalence to agree by: one member at a time,
    until an answer passes its check."""
    return (
        settings.first_answers == "as_needed"
        and settings.when_split == "rank"
        and checked
        and settings.agreement not in EQUIVALENCES
    )
