"""What every event is (`core/events.py`): a frozen record with its JSON `kind` and the
time it happened, and its JSON form."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar


def _now() -> float:
    return time.time()


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    kind: ClassVar[str]  # the "type" in its JSON form; each event class names its own
    # A record the event embeds whose fields its JSON line holds at the top level, last.
    flat: ClassVar[str] = ""
    at: float = field(default_factory=_now, compare=False)

    def to_dict(self) -> dict[str, Any]:
        data = {"type": self.kind, **asdict(self)}
        if self.flat:
            data.update(data.pop(self.flat))
        return data
