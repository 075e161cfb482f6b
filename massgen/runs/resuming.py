"""`massgen --resume [LOG_DIR]`: find an interrupted run and what it needs to continue.

A run writes `run.json` beside its journal when it starts: the question, where its
config came from, and the team's fingerprint (agent ids, backend types, models). A
resume loads the same config (or the one given with `--config`), refuses it when the
fingerprint differs, and continues from the journal (`coordination/resume.py`) in the
same log directory, as a new attempt.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.config import loader
from massgen.config.schema import MassgenConfig
from massgen.coordination.prompts import Turn
from massgen.coordination.resume import Resumed, ResumeError, from_journal
from massgen.core.errors import ConfigError
from massgen.record.atomic import write_json
from massgen.record.journal import JournalError, read_journal
from massgen.record.recorder import LOG_BASE_ENV
from massgen.runs.loading import LoadedConfig, load

RECORD = "run.json"
JOURNAL = "events.jsonl"


def fingerprint(config: MassgenConfig) -> str:
    """What makes a team the same team: its agents' ids, backend types and models."""
    team = [[a.id, a.backend.type, a.backend.model] for a in config.agents]
    return hashlib.sha256(json.dumps(team).encode()).hexdigest()[:16]


def write_record(
    log_dir: Path, loaded: LoadedConfig, question: str, history: Sequence[Turn] = ()
) -> None:
    """`run.json`: how to load this run's config again, and the conversation its agents
    read (a chat turn's). A file config is named by its absolute path; a config built from
    flags is kept as written, unless it holds a secret (then `--config` is needed)."""
    source = loaded.source
    config: Any = None
    if source and Path(source).is_file():
        config = str(Path(source).resolve())
    elif loaded.raw is not None:
        config = loader.redact(loaded.raw)
        if config != loaded.raw:  # a key written into it: not ours to keep
            config = None
    record = {
        "question": question,
        "config": config,
        "fingerprint": fingerprint(loaded.config),
        "history": [[turn.question, turn.answer] for turn in history],
    }
    write_json(log_dir / RECORD, record, fsync=True)


@dataclass(frozen=True, slots=True)
class Resumable:
    log_dir: Path
    loaded: LoadedConfig
    resumed: Resumed
    history: tuple[Turn, ...] = ()


def prepare(log_dir: str | None, config: str | None) -> Resumable:
    """The run to continue and its config.

    Raises:
        ConfigError: nothing to resume there, the journal cannot be continued, or the
            config's team is not the run's (one line, exit 1).
    """
    turn = find(log_dir)
    record = _read_record(turn)
    resumed = _fold(turn)
    loaded = load(config if config else _recorded_config(record, turn))
    return _check(turn, record, loaded, resumed)


def prepare_with(turn: Path, loaded: LoadedConfig) -> Resumable:
    """The run in `turn` (a chat turn's log dir) with the team the caller has loaded.

    Raises:
        ConfigError: as `prepare`.
    """
    return _check(turn, _read_record(turn), loaded, _fold(turn))


def _fold(turn: Path) -> Resumed:
    try:
        return from_journal(read_journal(turn / JOURNAL))
    except (OSError, JournalError, ResumeError) as error:
        raise ConfigError(f"cannot resume {turn}: {error}") from None


def _check(turn: Path, record: dict[str, Any], loaded: LoadedConfig, resumed: Resumed) -> Resumable:
    if fingerprint(loaded.config) != record.get("fingerprint"):
        raise ConfigError(
            f"cannot resume {turn}: the config's team (agent ids, backends, models) is not "
            "the one the run started with",
            fix="resume with the run's original config, or start a new run",
        )
    try:
        resumed.summary()  # replays the board: a journal this team cannot continue fails here
    except ResumeError as error:
        raise ConfigError(f"cannot resume {turn}: {error}") from None
    return Resumable(turn, loaded, resumed, _history(record))


def find(log_dir: str | None) -> Path:
    """The turn directory to resume: LOG_DIR's (a `turn_<n>` or a `log_<ts>` folder), else
    the newest interrupted run under the log base directory."""
    if log_dir:
        path = Path(log_dir).expanduser()
        turn = path if (path / JOURNAL).is_file() else _newest_turn(path)
        if turn is None:
            raise ConfigError(f"{log_dir}: no run journal ({JOURNAL}) in it")
        return turn
    base = Path(os.environ.get(LOG_BASE_ENV) or Path.cwd() / ".massgen" / "massgen_logs")
    for session in sorted(base.glob("log_*"), reverse=True):
        turn = _newest_turn(session)
        if turn is not None and interrupted(turn):
            return turn
    raise ConfigError(f"no interrupted run to resume under {base}")


def interrupted(turn: Path) -> bool:
    """The run's journal can be continued: it did not finish (or finished interrupted)."""
    try:
        from_journal(read_journal(turn / JOURNAL))
    except (OSError, JournalError, ResumeError):
        return False
    return (turn / RECORD).is_file()


def _newest_turn(session: Path) -> Path | None:
    turns = [t for t in session.glob("turn_*") if (t / JOURNAL).is_file()]
    return max(turns, key=lambda t: _turn_number(t.name), default=None)


def _turn_number(name: str) -> int:
    digits = name.removeprefix("turn_")
    return int(digits) if digits.isdigit() else 0


def _read_record(turn: Path) -> dict[str, Any]:
    try:
        record = json.loads((turn / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ConfigError(
            f"cannot resume {turn}: {RECORD} is missing or unreadable",
            fix="the run was started by an older massgen; start it again",
        ) from None
    if not isinstance(record, dict):
        raise ConfigError(f"cannot resume {turn}: {RECORD} is not a JSON object")
    return record


def _history(record: dict[str, Any]) -> tuple[Turn, ...]:
    turns = record.get("history") or []
    return tuple(Turn(str(q), str(a)) for q, a in turns if isinstance(q, str))


def _recorded_config(record: dict[str, Any], turn: Path) -> Any:
    config = record.get("config")
    if config is None:
        raise ConfigError(
            f"cannot resume {turn}: its config was not a file (or held a secret)",
            fix="pass the team's config with --config",
        )
    if isinstance(config, str) and not Path(config).is_file():
        raise ConfigError(
            f"cannot resume {turn}: its config {config} is gone",
            fix="pass the team's config with --config",
        )
    return config
