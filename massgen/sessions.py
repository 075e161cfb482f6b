"""Chat sessions on disk: every turn of a conversation, so a later run can continue it.

.massgen/sessions/<id>/
  session.json          id, created, updated, config (rewritten after each turn)
  SESSION_SUMMARY.txt   every turn, readable (rewritten after each turn)
  turn_<n>/             question.txt, answer.txt, metadata.json
    workspace/          the turn's final workspace, if its agents had workspaces

A turn directory is written under a temporary name and renamed into place, so a crash
leaves either the whole turn or none of it; the two session files are replaced
atomically. Readers ignore anything that is not a complete `turn_<n>`.

What the next turn sees: every saved turn, in order, as (question, answer). A turn that
did not finish normally (interrupted, timed out, failed) is still there, its answer
prefixed with a note saying so, so a follow-up like "no, I meant..." keeps its context.
The latest saved turn workspace is the next turn's `previous/` (read-only).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from massgen.coordination.prompts import Turn
from massgen.core.errors import ConfigError
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.record.atomic import write_json, write_text
from massgen.record.text import preview

SESSIONS_DIR = Path(".massgen") / "sessions"
_TURN_DIR = re.compile(r"^turn_(\d+)$")
_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True, slots=True)
class SavedTurn(Outcome):
    """One finished (or cut-short) turn, as stored in turn_<n>/metadata.json: how it ended
    (`Outcome`), its question, votes and tokens."""

    number: int
    question: str
    tally: dict[str, int] = field(default_factory=dict)
    votes: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)  # agent -> token counts
    log_dir: str | None = None
    started: float = 0.0
    finished: float = 0.0

    @property
    def complete(self) -> bool:
        return self.status.complete

    def as_history(self) -> Turn:
        """The turn as the next turn's agents read it; see the module docstring."""
        if self.complete:
            return Turn(self.question, self.answer)
        what = "interrupted by the user" if self.status is Status.INTERRUPTED else self.status
        if not self.answer.strip():
            return Turn(self.question, f"[no answer: the turn was {what} before any answer]")
        return Turn(
            self.question,
            f"[partial answer: the turn was {what} before the team finished]\n{self.answer}",
        )

    def total_tokens(self) -> int:
        return sum(
            u.get("input_tokens", 0) + u.get("output_tokens", 0) for u in self.usage.values()
        )

    def total_cost(self) -> float | None:
        costs = [u["cost_usd"] for u in self.usage.values() if u.get("cost_usd") is not None]
        return sum(costs) if costs else None


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    created: float
    updated: float
    turns: int
    first_question: str


class Session:
    """A conversation's directory. Nothing is written until the first turn is saved."""

    def __init__(self, session_id: str, base: Path | None = None, *, config: str | None = None):
        self.id = session_id
        self.dir = (base or SESSIONS_DIR) / session_id
        self.config = config
        self.created = _now()

    @classmethod
    def new(cls, base: Path | None = None, *, config: str | None = None) -> Session:
        stamp = datetime.now().strftime("%Y%m%d_%H%M%S")
        return cls(f"{stamp}_{secrets.token_hex(2)}", base, config=config)

    @classmethod
    def open(cls, session_id: str, base: Path | None = None) -> Session:
        """An existing session. Raises ConfigError (a user error) if there is none."""
        session = cls(session_id, base)
        if not _ID.match(session_id) or not session.dir.is_dir():
            raise ConfigError(
                f"no session {session_id!r} in {session.dir.parent}",
                fix="see `massgen --list-sessions`",
            )
        meta = _read_json(session.dir / "session.json") or {}
        session.created = float(meta.get("created") or session.created)
        session.config = meta.get("config")
        return session

    @classmethod
    def latest(cls, base: Path | None = None) -> Session:
        """The session used most recently. Raises ConfigError if there is none."""
        found = list_sessions(base)
        if not found:
            raise ConfigError(
                f"no session to continue in {base or SESSIONS_DIR}",
                fix="start one with `massgen` (no question), then use --continue",
            )
        return cls.open(max(found, key=lambda s: s.updated).id, base)

    def turns(self) -> list[SavedTurn]:
        """Every complete turn on disk, in order."""
        if not self.dir.is_dir():
            return []
        numbered = sorted(
            (int(m.group(1)), path)
            for path in self.dir.iterdir()
            if (m := _TURN_DIR.match(path.name)) and path.is_dir()
        )
        turns = []
        for _, path in numbered:
            turn = _turn_from(_read_json(path / "metadata.json"))
            if turn is not None:
                turns.append(turn)
        return turns

    def history(self) -> list[Turn]:
        return [turn.as_history() for turn in self.turns()]

    def next_number(self) -> int:
        turns = self.turns()
        return turns[-1].number + 1 if turns else 1

    def previous_workspace(self, before: int | None = None) -> Path | None:
        """The final workspace of the latest turn that saved one, for the next turn (for
        turn `before`, when given: a resumed turn reads the one of the turns before it)."""
        turns = [t for t in self.turns() if before is None or t.number < before]
        for turn in reversed(turns):
            folder = self.dir / f"turn_{turn.number}" / "workspace"
            if folder.is_dir():
                return folder
        return None

    def save(self, turn: SavedTurn, workspace: Path | None = None) -> SavedTurn:
        """Write `turn` whole, under the next free number (which it returns it with);
        `workspace`, the turn's final workspace, is copied into it as `workspace/`."""
        self.dir.mkdir(parents=True, exist_ok=True)
        number = max(turn.number, self.next_number())
        while True:
            saved = _replace_number(turn, number)
            staging = Path(tempfile.mkdtemp(dir=self.dir, prefix=f".turn_{number}.", suffix=".tmp"))
            try:
                _write_turn_files(staging, saved)
                if workspace is not None and workspace.is_dir():
                    shutil.copytree(workspace, staging / "workspace", symlinks=True)
                os.rename(staging, self.dir / f"turn_{number}")
                break
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
                if not (self.dir / f"turn_{number}").exists():
                    raise
                number += 1  # another process saved this number first
        self._write_session_files()
        return saved

    def replace(self, turn: SavedTurn, workspace: Path | None = None) -> SavedTurn:
        """Write `turn` over the saved turn of its number (a resumed turn). The new one is
        written whole first, then swapped in by two renames; a crash between them leaves
        the old turn under a dot-name, which readers skip."""
        target = self.dir / f"turn_{turn.number}"
        staging = Path(
            tempfile.mkdtemp(dir=self.dir, prefix=f".turn_{turn.number}.", suffix=".tmp")
        )
        try:
            _write_turn_files(staging, turn)
            if workspace is not None and workspace.is_dir():
                shutil.copytree(workspace, staging / "workspace", symlinks=True)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        old = self.dir / f".turn_{turn.number}.{secrets.token_hex(3)}.old"
        if target.exists():
            os.rename(target, old)
        os.rename(staging, target)
        shutil.rmtree(old, ignore_errors=True)
        self._write_session_files()
        return turn

    def _write_session_files(self) -> None:
        turns = self.turns()
        meta = {
            "id": self.id,
            "created": self.created,
            "updated": _now(),
            "turns": len(turns),
            "config": self.config,
            "first_question": turns[0].question if turns else "",
        }
        write_json(self.dir / "session.json", meta)
        write_text(self.dir / "SESSION_SUMMARY.txt", summary_text(self, turns))


def list_sessions(base: Path | None = None) -> list[SessionInfo]:
    """Sessions with at least one saved turn, oldest first."""
    root = base or SESSIONS_DIR
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.iterdir()):
        if not path.is_dir() or path.name.startswith("."):
            continue
        turns = Session(path.name, root).turns()
        if not turns:
            continue
        meta = _read_json(path / "session.json") or {}
        found.append(
            SessionInfo(
                id=path.name,
                created=float(meta.get("created") or turns[0].started),
                updated=float(meta.get("updated") or turns[-1].finished),
                turns=len(turns),
                first_question=turns[0].question,
            )
        )
    return found


def listing_text(sessions: list[SessionInfo]) -> str:
    """One line per session: id, start time, turns, first question."""
    if not sessions:
        return "no sessions yet (an interactive `massgen` chat saves one)\n"
    lines = [f"{'session':<24} {'started':<16} {'turns':>5}  first question"]
    for s in sessions:
        lines.append(
            f"{s.id:<24} {_when(s.created):<16} {s.turns:>5}  {preview(s.first_question, 60)}"
        )
    return "\n".join(lines) + "\n"


def summary_text(session: Session, turns: list[SavedTurn]) -> str:
    """SESSION_SUMMARY.txt: the whole conversation, readable without any tool."""
    lines = [
        f"massgen session {session.id}",
        f"started {_when(session.created)} · {len(turns)} turn(s)"
        + (f" · config {session.config}" if session.config else ""),
    ]
    for turn in turns:
        winner = f" · winner {turn.winner} ({turn.winner_label})" if turn.winner else ""
        lines += [
            "",
            f"── turn {turn.number} · {_when(turn.started)} · {turn.status}{winner} ──",
            f"Q: {turn.question}",
        ]
        if not turn.complete:
            lines.append(f"({turn.status}: {turn.reason})")
        lines.append(f"A: {turn.answer or '(no answer)'}")
        if turn.log_dir:
            lines.append(f"logs: {turn.log_dir}")
    return "\n".join(lines) + "\n"


def _write_turn_files(folder: Path, turn: SavedTurn) -> None:
    (folder / "question.txt").write_text(turn.question + "\n", encoding="utf-8")
    (folder / "answer.txt").write_text(turn.answer + "\n", encoding="utf-8")
    # The number and the question first, for whoever opens the file.
    data = {"number": turn.number, "question": turn.question, **asdict(turn)}
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    (folder / "metadata.json").write_text(text, encoding="utf-8")


def _turn_from(data: dict[str, Any] | None) -> SavedTurn | None:
    """The turn in a metadata.json; None for one edited into something else."""
    if data is None:
        return None
    names = set(SavedTurn.__dataclass_fields__)
    fields = {key: value for key, value in data.items() if key in names}
    status = fields.get("status")
    if not isinstance(status, str):
        return None
    try:
        return SavedTurn(**{**fields, "status": Status(status)})
    except (TypeError, ValueError):
        return None


def _replace_number(turn: SavedTurn, number: int) -> SavedTurn:
    return turn if turn.number == number else SavedTurn(**{**asdict(turn), "number": number})


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _now() -> float:
    return datetime.now().timestamp()


def _when(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M") if at else "-"
