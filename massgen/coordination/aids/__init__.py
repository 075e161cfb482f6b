"""The optional coordination aids, behind the one interface the core calls.

The protocol core (`coordination/`: orchestrator, agent loop, board, prompts, winner)
never names an aid: it holds the run's `Aids` (`base.py`) and calls its hooks. Each aid
here is one feature switched on in `orchestrator.coordination`:

    generated.py    personas, criteria, paraphrases: generated before coordination
                    (`personas.py`, `criteria.py`, `paraphrases.py`, `generation.py`)
    changedoc.py    the decision log in each workspace, stamped before its snapshot
    broadcast.py    questions between agents, or to the person (`ask_others`)

`configured` picks the aids a config switches on, in the order their prompt paragraphs
appear.
"""

from __future__ import annotations

from massgen.config.coordination import CoordinationConfig
from massgen.coordination.aids.base import Aid, Aids, Snapshots
from massgen.coordination.aids.changedoc import Changedoc
from massgen.coordination.aids.generated import Criteria, Paraphrases, Personas

__all__ = ["Aid", "Aids", "Snapshots", "configured"]


def configured(settings: CoordinationConfig, *also: Aid) -> Aids | None:
    """The aids `settings` switches on, then `also` (made with the run: the broadcasts);
    None when there are none."""
    chosen: list[Aid] = []
    if settings.persona_generator.enabled:
        chosen.append(Personas(settings.persona_generator))
    if settings.evaluation_criteria_generator.enabled:
        chosen.append(Criteria(settings.evaluation_criteria_generator))
    if settings.question_paraphraser.enabled:
        chosen.append(Paraphrases(settings.question_paraphraser))
    if settings.enable_changedoc:
        chosen.append(Changedoc())
    chosen += also
    return Aids(chosen) if chosen else None
