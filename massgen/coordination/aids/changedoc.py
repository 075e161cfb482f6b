"""The changedoc (`orchestrator.coordination.enable_changedoc`): a decision log each agent
with a workspace keeps in `tasks/changedoc.md`, written with the file tools it has.

It is an ordinary workspace file, so it is part of each answer's snapshot: peers read it
under `peers/<label>/tasks/changedoc.md`, a vote endorses it with the answer, and the
presenter starts from the winner's copy, which its system prompt also shows (bounded),
with the instruction to consolidate it. `[SELF]` in an agent's changedoc becomes its
answer's label when it publishes (`Changedoc.on_answer`). Agents without a workspace keep none.
What the predecessor added on top (checklist gap reports scored against it, changedoc
evaluation criteria) is not part of this version.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from massgen.coordination.agent import Member
from massgen.coordination.aids.base import Aid
from massgen.coordination.board import Answer

PATH = "tasks/changedoc.md"
# The winner's changedoc in the presenter's prompt; past this it is cut (the file is in
# its workspace).
MAX_SHOWN_CHARS = 12_000
# A changedoc larger than this is not stamped (it stays as written).
MAX_STAMPED_BYTES = 1024 * 1024

FIRST = (
    "CHANGEDOC (decision journal): before you start writing your answer, create "
    f"`{PATH}` in your workspace, and log each significant decision as you make it: what "
    "you chose and why, the alternatives you rejected, which part of the task drove it, "
    "and where it is implemented (`relative/path` → function or section). Mark your "
    "decisions `Origin: [SELF] — NEW`; `[SELF]` becomes your answer's label when you "
    "publish. Before you submit, check that every Implementation entry describes what "
    "really exists. Shape:\n"
    "# Change Document\n## Summary\n## Decisions\n### DEC-001: <title>\n"
    "**Origin:** [SELF] — NEW\n**Choice:** ...\n**Why:** ...\n"
    "**Alternatives considered:** ...\n**Implementation:** ...\n## Deliberation Trail"
)

LATER = (
    "CHANGEDOC (decision journal): keep `tasks/changedoc.md` in your workspace. Each "
    "answer's changedoc is at `peers/<label>/tasks/changedoc.md` (for example "
    "`peers/agent1.2/tasks/changedoc.md`); read them before you decide. Build yours by "
    "selecting, modifying or replacing their decisions, not by copying one wholesale. "
    "Keep each decision's Origin chain (`agent1.1 → [SELF] (modified)`), keep the "
    "original **Why:** and put your reasons in a **Synthesis Note:**, mark ideas of "
    "your own `[SELF] — NEW`, and add to the Deliberation Trail what changed and why. "
    "A changedoc change must come with a change to the answer itself: if the changedoc "
    "is all you would change, vote instead."
)

PRESENTER = (
    "CHANGEDOC: your workspace holds the selected answer's `tasks/changedoc.md`. Finish "
    "it as the final decision record: the Summary reflects the final answer, superseded "
    "decisions are removed, every decision keeps its Origin and rationale, and every "
    "Implementation entry points at the final files."
)


def note(has_answers: bool) -> str:
    """The system-prompt paragraph of an agent with a workspace."""
    return LATER if has_answers else FIRST


def presenter_note(workspace: Path | None) -> str | None:
    """The presenter's paragraph, with the winner's changedoc as its workspace holds it;
    None without a workspace."""
    if workspace is None:
        return None
    text = _read(workspace / PATH, MAX_SHOWN_CHARS * 4)
    if text is None or not text.strip():
        return f"{PRESENTER} (The selected answer has none yet: write it.)"
    cut = len(text) > MAX_SHOWN_CHARS
    shown = text[:MAX_SHOWN_CHARS] + (
        "\n[... cut; the whole file is in your workspace]" if cut else ""
    )
    return f"{PRESENTER}\n<changedoc>\n{shown}\n</changedoc>"


def _read(path: Path, limit: int) -> str | None:
    """A regular file's first `limit` bytes as text (a symlink or anything else: None)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return None
        with path.open("rb") as f:
            return f.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return None


def stamp(workspace: Path, label: str) -> None:
    """`[SELF]` in the workspace's changedoc becomes `label` (atomically), before the
    answer's snapshot is taken."""
    path = workspace / PATH
    text = _read(path, MAX_STAMPED_BYTES + 1)
    if text is None or "[SELF]" not in text or len(text.encode()) > MAX_STAMPED_BYTES:
        return
    temp = path.with_name(f".{path.name}.stamp")
    try:
        temp.write_text(text.replace("[SELF]", label), encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)


class Changedoc(Aid):
    """The changedoc as an aid: the note in each agent's system prompt (those with a
    workspace), the winner's changedoc in the presenter's, and `[SELF]` stamped before
    each answer's snapshot."""

    name = "changedoc"

    def notes(self, member: Member, answered: bool, shown: Sequence[Answer]) -> tuple[str, ...]:
        return (note(bool(shown)),) if member.workspace is not None else ()

    def presenter_notes(self, workspace: Path | None) -> tuple[str, ...]:
        text = presenter_note(workspace)
        return (text,) if text else ()

    def on_answer(self, workspace: Path, label: str) -> None:
        stamp(workspace, label)
