"""Filesystem memory (`orchestrator.coordination.enable_memory_filesystem_mode`): notes
agents keep as Markdown files in their workspaces, which outlast one answer.

    memory/short_term/<name>.md   shown in every agent's system prompt (bounded)
    memory/long_term/<name>.md    listed there by name and description; read on demand
                                  with the file tools (`read_file`), like any other file

Agents write them with the file tools they already have (`write_file`, `edit_file`); there
is no memory tool. Each run's system prompt (`TeamMemory.note`) shows the agent's own
memories (its live workspace) and those in the snapshots of the answers it sees (under
their anonymous labels, `peers/<label>/memory/...`), newest first, within `MemoryBounds`:
past them a memory is cut with a marker and the rest are counted, never shown. A peer's
memory with the content of one already in view (by sha256, the store's own key) is left
out unread. A file is read only if it is a regular file (not a symlink) in a memory
directory that is itself a real directory of the workspace, and only as far as the prompt
could show it.

Across the turns of a chat, the final workspace (the winner's files) is saved with the
session (`sessions.py`); at the start of the next turn `carry` replaces each agent's
`memory/` with a writable copy of that workspace's, bounded (`MAX_CARRIED_FILES` per tier,
`MAX_CARRIED_BYTES` per file), so the winner's memories are every agent's starting point
and what the next winner keeps carries on. A single run keeps them within the run.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from massgen.core import safe_open
from massgen.workspace.paths import PEERS
from massgen.workspace.store import Manifest, Store

MEMORY_DIR = "memory"
SHORT_TERM = "short_term"
LONG_TERM = "long_term"
TIERS = (SHORT_TERM, LONG_TERM)
# A memory's file name: what the prompt shows, so nothing odd gets in through it.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.md$")
# Entries of one memory directory looked at, in the directory's order (a directory of
# thousands costs no more).
MAX_SCANNED = 200
# Carried into the next chat turn: files per tier, and the largest file carried.
MAX_CARRIED_FILES = 100
MAX_CARRIED_BYTES = 256 * 1024
_DESCRIPTION_CHARS = 160
# A memory cut to fewer characters than this is not worth showing: it is counted instead.
_MIN_SHOWN_CHARS = 200


@dataclass(frozen=True, slots=True)
class MemoryBounds:
    """What one system prompt holds: at most `max_short_term` short-term memories, their
    texts `max_chars` characters in all, and `max_long_term` long-term ones listed."""

    max_short_term: int = 10
    max_chars: int = 8000
    max_long_term: int = 20


@dataclass(frozen=True, slots=True)
class Memory:
    tier: str
    where: str  # the path the agent reads it at, relative to its workspace
    text: str  # the file's text, at most the bytes `_read_cap` allows
    cut: bool  # the file goes on past `text`
    when: float  # last changed (own files) or published (a peer's snapshot)
    digest: str  # sha256 of the whole file ("" for an own file longer than was read)

    @property
    def description(self) -> str:
        return _front_matter(self.text).get("description", "")[:_DESCRIPTION_CHARS]

    @property
    def body(self) -> str:
        """The text after its front matter block (all of it when it has none)."""
        match = _FRONT.match(self.text)
        return self.text[match.end() :].strip() if match else self.text.strip()


_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(\n|\Z)", re.DOTALL)


def _front_matter(text: str) -> dict[str, str]:
    """`key: value` lines of a leading `---` block (the predecessor's format)."""
    match = _FRONT.match(text)
    if not match:
        return {}
    pairs = (line.split(":", 1) for line in match.group(1).splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}


# --- reading ------------------------------------------------------------------------------


def own_memories(root: Path, tier: str, read_cap: int) -> list[Memory]:
    """The memories of tier `tier` in the workspace at `root`, as they are now. Opened
    beneath the workspace's descriptor, never through a link, never a FIFO: the agent's
    commands may change the folder while it is read."""
    try:
        folder = safe_open.open_dir_beneath(root, f"{MEMORY_DIR}/{tier}")
    except OSError:
        return []
    found = []
    try:
        for entry in _entries(folder):
            info = entry.stat(follow_symlinks=False)
            try:
                data = safe_open.read_head(folder, entry.name, read_cap)
            except OSError:
                continue
            cut = info.st_size > len(data)
            digest = "" if cut else hashlib.sha256(data).hexdigest()
            where = f"{MEMORY_DIR}/{tier}/{entry.name}"
            found.append(Memory(tier, where, _text(data), cut, info.st_mtime, digest))
    finally:
        os.close(folder)
    return found


def snapshot_memories(
    store: Store,
    label: str,
    manifest: Manifest,
    tier: str,
    read_cap: int,
    when: float,
    known: set[str],
) -> list[Memory]:
    """The memories of tier `tier` in the snapshot of answer `label` (published at `when`),
    but for those whose content is `known` (shown already: never read again)."""
    prefix = f"{MEMORY_DIR}/{tier}/"
    found = []
    for relpath, entry in manifest.files.items():
        name = relpath[len(prefix) :]
        if not relpath.startswith(prefix) or not _NAME.match(name) or entry.hash in known:
            continue
        known.add(entry.hash)
        data = _read_head(store.object_path(entry.hash), read_cap)
        where = f"{PEERS}/{label}/{relpath}"
        found.append(Memory(tier, where, _text(data), entry.size > len(data), when, entry.hash))
        if len(found) >= MAX_SCANNED:
            break
    return found


def _memory_dir(root: Path, tier: str) -> Path | None:
    """`root/memory/<tier>` when it is a real directory inside `root` (a symlinked one,
    pointing anywhere, is not read)."""
    folder = root / MEMORY_DIR / tier
    try:
        for part in (root / MEMORY_DIR, folder):
            if not stat.S_ISDIR(os.lstat(part).st_mode):
                return None
    except OSError:
        return None
    return folder


def _entries(folder: Path | int) -> Iterator[os.DirEntry[str]]:
    """Regular `*.md` files of `folder` (never a symlink), at most `MAX_SCANNED`."""
    seen = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            seen += 1
            if seen > MAX_SCANNED:
                return
            if _NAME.match(entry.name) and entry.is_file(follow_symlinks=False):
                yield entry


def _read_head(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of the file (nothing, when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="ignore")  # a UTF-8 character cut at the end goes


# --- the prompt ---------------------------------------------------------------------------

INSTRUCTIONS = (
    "MEMORY: keep what is worth remembering beyond this answer as Markdown files in your "
    f"workspace. `{MEMORY_DIR}/{SHORT_TERM}/<name>.md`: short notes useful every time "
    "(findings, decisions, what worked or failed, the user's preferences); every agent of "
    "the team sees them in its instructions, also in later turns of the conversation. "
    f"`{MEMORY_DIR}/{LONG_TERM}/<name>.md`: longer material needed only sometimes; it is "
    "listed by name and description, read one with `read_file`. Start each file with\n"
    "---\nname: <name>\ndescription: <one line>\n---\n"
    "Write or update them with `write_file` before you publish your answer: the team reads "
    "the memories that come with the answers, and those of the chosen answer carry on to "
    "the next turn (copy a peer's memory worth keeping into yours with `copy_from_peer`). "
    "Keep them short; update a memory rather than adding a near copy."
)


PRESENTER_NOTE = (
    f"MEMORY: your workspace holds the chosen answer's memories (`{MEMORY_DIR}/{SHORT_TERM}/`, "
    f"`{MEMORY_DIR}/{LONG_TERM}/`); they are what the next turn of the conversation starts "
    "from. Before the final answer, bring them up to date with what this turn taught: merge "
    "near copies, drop what is wrong, and copy a peer's memory worth keeping with "
    "`copy_from_peer`. Keep the front matter (name, description)."
)


class PeerSnapshots(Protocol):
    """What `TeamMemory` reads besides the agents' workspaces (`workspace/team.py`)."""

    @property
    def store(self) -> Store: ...

    @property
    def agents(self) -> tuple[str, ...]: ...

    def path(self, agent: str) -> Path: ...

    def snapshots(self) -> Mapping[str, Manifest]: ...


class TeamMemory:
    """The memory section of each agent's system prompt, read fresh for every run."""

    def __init__(self, workspaces: PeerSnapshots, bounds: MemoryBounds | None = None) -> None:
        self.workspaces = workspaces
        self.bounds = bounds or MemoryBounds()

    def note(self, agent: str, labels: Sequence[str]) -> str | None:
        """The section for `agent`, with the memories of the answers `labels` (its peers'
        it sees); None for an agent without a workspace."""
        if agent not in self.workspaces.agents:
            return None
        cap = _read_cap(self.bounds)
        short = self._gather(agent, labels, SHORT_TERM, cap)
        long = self._gather(agent, labels, LONG_TERM, 4 * 1024)
        parts = [INSTRUCTIONS, short_term_block(short, self.bounds)]
        if long:
            parts.append(long_term_block(long, self.bounds))
        return "\n\n".join(parts)

    def presenter_note(self) -> str:
        return PRESENTER_NOTE

    def _gather(self, agent: str, labels: Sequence[str], tier: str, cap: int) -> list[Memory]:
        """The agent's own memories, then its peers' that it does not hold itself (a
        memory carried from the last turn is in every workspace), newest first."""
        found = own_memories(self.workspaces.path(agent), tier, cap)
        known = {memory.digest for memory in found if memory.digest}
        snapshots = self.workspaces.snapshots()
        store = self.workspaces.store
        for label in labels:
            manifest = snapshots.get(label)
            if manifest is not None:
                when = store.saved_at(label)
                found += snapshot_memories(store, label, manifest, tier, cap, when, known)
        return sorted(found, key=lambda memory: -memory.when)


def _read_cap(bounds: MemoryBounds) -> int:
    """Bytes worth reading of one short-term memory: enough for all the characters a
    prompt may show (a UTF-8 character is at most 4 bytes), plus one to see it goes on."""
    return 4 * bounds.max_chars + 1


def short_term_block(memories: Sequence[Memory], bounds: MemoryBounds) -> str:
    """The short-term memories within `bounds`; one that does not fit is cut with a
    marker, and those left out are counted."""
    if not memories:
        return "<SHORT-TERM MEMORIES>\n(none yet)\n<END OF SHORT-TERM MEMORIES>"
    left = bounds.max_chars
    shown: list[str] = []
    for memory in memories[: bounds.max_short_term]:
        body = memory.body
        if len(body) <= left and not memory.cut:
            shown.append(_shown(memory, body))
            left -= len(body)
            continue
        if left < _MIN_SHOWN_CHARS:
            break
        shown.append(_shown(memory, f"{body[:left]}\n{CUT_MARKER}"))
        left = 0
    rest = len(memories) - len(shown)
    if rest:
        shown.append(
            f"[{rest} more short-term memor{'y' if rest == 1 else 'ies'} not shown; "
            f"`list_dir {MEMORY_DIR}/{SHORT_TERM}` and `read_file` find them]"
        )
    return "<SHORT-TERM MEMORIES>\n" + "\n\n".join(shown) + "\n<END OF SHORT-TERM MEMORIES>"


CUT_MARKER = "[... cut here: the memory goes on; read the whole file with read_file]"


def _shown(memory: Memory, body: str) -> str:
    title = f"{memory.where}: {memory.description}" if memory.description else memory.where
    return f"## {title}\n{body}"


def long_term_block(memories: Sequence[Memory], bounds: MemoryBounds) -> str:
    lines = [
        f"- {m.where}" + (f": {m.description}" if m.description else "")
        for m in memories[: bounds.max_long_term]
    ]
    rest = len(memories) - len(lines)
    if rest:
        lines.append(f"[{rest} more not listed; `list_dir {MEMORY_DIR}/{LONG_TERM}`]")
    body = "\n".join(lines)
    return f"<LONG-TERM MEMORIES (read with read_file)>\n{body}\n<END OF LONG-TERM MEMORIES>"


# --- across turns -------------------------------------------------------------------------


def carry(previous: Path, workspaces: Sequence[Path]) -> int:
    """Replace `memory/` of each workspace with a copy of `previous`'s (the last chat
    turn's final workspace), bounded; returns how many files each received."""
    chosen = {tier: _carried(previous, tier) for tier in TIERS}
    for root in workspaces:
        target = root / MEMORY_DIR
        if target.is_symlink() or target.is_file():
            target.unlink()
        else:
            shutil.rmtree(target, ignore_errors=True)
        for tier, files in chosen.items():
            if files:
                (target / tier).mkdir(parents=True, exist_ok=True)
            for source in files:
                shutil.copy2(source, target / tier / source.name, follow_symlinks=False)
    return sum(len(files) for files in chosen.values())


def _carried(previous: Path, tier: str) -> list[Path]:
    """The files of `previous/memory/<tier>` that carry: regular, not too big, newest first."""
    folder = _memory_dir(previous, tier)
    if folder is None:
        return []
    entries = [e for e in _entries(folder) if e.stat().st_size <= MAX_CARRIED_BYTES]
    entries.sort(key=lambda e: -e.stat().st_mtime)
    return [Path(e.path) for e in entries[:MAX_CARRIED_FILES]]
