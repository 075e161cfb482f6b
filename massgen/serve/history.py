"""Past runs, read from the log directories that `massgen.record` writes.

A run id names one turn directory: `log_20261201_112233_123456.1` is
`<log root>/log_20261201_112233_123456/turn_1/`. Ids are checked against that pattern and
the resolved directory must sit inside the log root, so no caller-supplied path is ever
opened. Files are read only inside the run's own directory, with a size bound.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.record.recorder import LOG_BASE_ENV

RUN_ID = re.compile(r"^(log_\d{8}_\d{6}_\d{6})\.(\d{1,4})$")
MAX_LISTED = 200  # newest first
MAX_FILE_BYTES = 20 * 1024 * 1024


def log_root() -> Path:
    """Where `record.new_log_dir` puts runs (the same rule, resolved now)."""
    return Path(os.environ.get(LOG_BASE_ENV) or Path.cwd() / ".massgen" / "massgen_logs")


def run_id_of(turn_dir: Path) -> str:
    """The id of a turn directory `.../log_<stamp>/turn_<n>`."""
    return f"{turn_dir.parent.name}.{turn_dir.name.removeprefix('turn_')}"


def run_dir(run_id: str, root: Path | None = None) -> Path | None:
    """The turn directory of a valid, existing run id; None for anything else."""
    match = RUN_ID.match(run_id)
    if match is None:
        return None
    base = (root or log_root()).resolve()
    path = (base / match.group(1) / f"turn_{int(match.group(2))}").resolve()
    if not path.is_relative_to(base) or not path.is_dir():
        return None
    return path


def run_file(run_id: str, name: str, root: Path | None = None) -> Path | None:
    """A regular file inside the run's own directory (symlinks out of it refused)."""
    folder = run_dir(run_id, root)
    if folder is None or not name or name.startswith(("/", "\\")) or "\x00" in name:
        return None
    path = (folder / name).resolve()
    if not path.is_relative_to(folder) or not path.is_file():
        return None
    return path if path.stat().st_size <= MAX_FILE_BYTES else None


@dataclass(frozen=True, slots=True)
class PastRun:
    id: str
    question: str
    started: str | None
    status: str | None
    winner: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "started": self.started,
            "status": self.status,
            "winner": self.winner,
            "live": False,
        }


def past_runs(root: Path | None = None, limit: int = MAX_LISTED) -> list[PastRun]:
    """The newest recorded turns first, each summarised from its status.json."""
    base = root or log_root()
    if not base.is_dir():
        return []
    sessions = sorted((p for p in base.iterdir() if p.name.startswith("log_")), reverse=True)
    runs: list[PastRun] = []
    for session in sessions:
        turns = sorted(session.glob("turn_*"), key=lambda p: p.name, reverse=True)
        for turn in turns:
            run_id = run_id_of(turn)
            if RUN_ID.match(run_id) and (turn / "events.jsonl").is_file():
                runs.append(_summary(run_id, turn))
            if len(runs) >= limit:
                return runs
    return runs


def _summary(run_id: str, turn: Path) -> PastRun:
    try:
        status = json.loads((turn / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        status = {}
    meta, results = status.get("meta") or {}, status.get("results") or {}
    return PastRun(
        run_id,
        str(meta.get("question") or ""),
        meta.get("start_time"),
        status.get("status"),
        results.get("winner"),
    )


def recorded_events(run_id: str, root: Path | None = None) -> list[dict[str, Any]] | None:
    """The events of a recorded run, as written (None: no such run)."""
    path = run_file(run_id, "events.jsonl", root)
    if path is None:
        return None
    events = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by an interrupted run
    return events
