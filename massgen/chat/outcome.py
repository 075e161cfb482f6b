"""What a finished chat turn leaves behind: the `SavedTurn` the session stores, and the
`LastTurn` the slash commands report on (the run's state and its coordination events)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.api import RunResult, Sink
from massgen.core import events as ev
from massgen.core.outcome import outcome_fields
from massgen.core.status import Status
from massgen.record.state import COORDINATION_EVENTS, RunState
from massgen.sessions import SavedTurn


@dataclass(slots=True)
class LastTurn:
    saved: SavedTurn
    state: RunState
    events: list[ev.AnyEvent] = field(default_factory=list)  # coordination events only


def keep_coordination(events: list[ev.AnyEvent]) -> Sink:
    """A sink that appends the coordination events (what `/table` draws) to `events`."""

    def keep(event: ev.AnyEvent) -> None:
        if isinstance(event, COORDINATION_EVENTS):
            events.append(event)

    return keep


def saved_turn(
    number: int,
    question: str,
    result: RunResult | None,
    state: RunState,
    log_dir: Path | None,
    started: float,
    finished: float,
) -> SavedTurn:
    """The turn as the session stores it; `result` is None when Ctrl-C came before the
    team started, which is saved as an interrupted turn without an answer."""
    common: dict[str, Any] = {
        "number": number,
        "question": question,
        "usage": {agent: state.spend(agent).to_dict() for agent in state.agents},
        "log_dir": str(log_dir) if log_dir else None,
        "started": started,
        "finished": finished,
    }
    if result is None:
        return SavedTurn(
            answer="",
            status=Status.INTERRUPTED,
            reason="interrupted before the team started",
            **common,
        )
    votes = [
        {"voter": v.voter, "target": v.target, "target_label": v.target_label, "reason": v.reason}
        for v in result.votes
    ]
    return SavedTurn(**outcome_fields(result), tally=dict(result.tally), votes=votes, **common)
