"""coordination_events.json: the coordination-level events of a run, in order."""

from __future__ import annotations

from typing import Any

from massgen.core.events import AnyEvent
from massgen.record.text import iso, preview

# Full texts live in agent_<id>/answer_<n>.txt and final/answer.txt; here a glimpse is enough.
_LONG_FIELDS = ("content", "answer", "result", "code", "output")
_LONG_PREVIEW = 200


def timeline_entry(event: AnyEvent) -> dict[str, Any]:
    data = event.to_dict()
    for key in ("type", "at"):
        data.pop(key)
    agent = data.pop("agent", None)
    for key in _LONG_FIELDS:
        if key in data:
            data[key] = preview(data[key], _LONG_PREVIEW)
    return {
        "timestamp": iso(event.at),
        "event_type": event.kind,
        "agent_id": agent,
        "details": data,
    }


def timeline_document(
    events: list[AnyEvent],
    *,
    question: str,
    agent_ids: list[str],
    start: float,
    end: float | None,
    winner: str | None,
) -> dict[str, Any]:
    return {
        "session_metadata": {
            "user_prompt": question,
            "agent_ids": agent_ids,
            "start_time": iso(start),
            "end_time": iso(end) if end is not None else None,
            "final_winner": winner,
        },
        "events": [timeline_entry(event) for event in events],
    }
