"""The audit ledger: one JSON line per decision, appended and fsynced before the call runs.

    {"seq": 1, "at": 1764590000.1, "agent": "alice", "tool": "execute_command",
     "call_id": "c1", "effects": ["run `cat a.txt`", "read `/ws/a.txt`"],
     "decision": "allow", "operator": "rule", "rule": "Command(cat *)", "risk": "low",
     "reason": "...", "phase": "coordination"}

`seq` rises by one per decision for the whole run, across agents. A ledger that cannot be
written makes the engine deny (a decision nobody can audit is not taken).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FILE = "permissions.jsonl"
MAX_ARGUMENTS = 2000  # characters of a call's arguments kept in a record


@dataclass(frozen=True, slots=True)
class Record:
    agent: str
    tool: str
    call_id: str
    effects: tuple[str, ...]
    decision: str  # allow | deny
    operator: str  # floor | rule | policy | human | error
    reason: str
    risk: str = ""
    rule: str = ""
    phase: str = "coordination"
    arguments: str = ""
    choice: str = ""  # the approver's answer, when one was asked
    at: float = field(default_factory=time.time)


class Ledger:
    """Append-only JSONL at `path`; None keeps records in memory only (`records`)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        self._seq = 0
        self._lock = threading.Lock()

    def append(self, record: Record) -> int:
        """Write `record` durably; returns its sequence number. Raises OSError."""
        with self._lock:
            data = {"seq": self._seq + 1, **asdict(record)}
            data["arguments"] = data["arguments"][:MAX_ARGUMENTS]
            data["effects"] = list(record.effects)
            if self.path is not None:
                self._write(json.dumps(data, ensure_ascii=False) + "\n")
            self._seq += 1
            self.records.append(data)
            return self._seq

    def _write(self, line: str) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)


def read(path: Path) -> list[dict[str, Any]]:
    """The records of a ledger file (a torn last line is skipped)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out
