"""How a run ended, declared once: `Outcome`.

Every record of a finished run is an outcome with more beside it: the coordination's
`TeamOutcome`, the API's `RunResult` and a session's `SavedTurn` extend it, and the
`RunFinished` event carries one. A field added here reaches all four; each is built from
the one before with `outcome_fields`, not field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from massgen.core.status import Status


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    answer: str
    status: Status
    reason: str
    winner: str | None = None  # the agent id whose answer won
    winner_label: str | None = None  # its answer's label ("agent2.3")
    failed_agents: dict[str, str] = field(default_factory=dict)  # agent id -> why it failed


def outcome_fields(record: Outcome) -> dict[str, Any]:
    """The `Outcome` part of `record` (which may extend it), by field name."""
    return {f.name: getattr(record, f.name) for f in fields(Outcome)}


def outcome_of(record: Outcome) -> Outcome:
    """Only the outcome of `record`, without what a record extending it adds."""
    return Outcome(**outcome_fields(record))
