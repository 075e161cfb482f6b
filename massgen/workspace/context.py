"""Context paths: the user's own directories (or files), readable by every agent and
writable only by the final presenter, only under `permission: write`, never under
`protected_paths` (`orchestrator.context_paths`).

A model names them by their absolute, resolved path, as the predecessor did: the user's
path names no agent. Every decision is taken on the real path (symlinks, `..` and
absolute forms resolved first), so a symlink in a workspace that points into a context
path is a context-path write, and refused during coordination.

`.git` and `.massgen` inside a context path are always protected, and `.massgen` (runs,
logs, workspaces) is never read through one either. A context path that holds HOME is
refused (`ContextPaths.of`); the file tools never read a secret in one (`secrets.py`).

What a run changed: `ContextPaths.baseline()` records, before the run, each file's stat
under every context path; the file tools `journal` a file's content hash before their
first change to it. `changes()` then lists created, modified and deleted files: a file in
the journal by its content (rewriting the same bytes is no change); any other file (a
command or an MCP server wrote it) by its stat (size, mtime, inode).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from massgen.config.schema import ContextPathConfig
from massgen.core import safe_open
from massgen.core.errors import ConfigError
from massgen.core.secrets import holds_home
from massgen.workspace.store import walk

ALWAYS_PROTECTED = (".git", ".massgen")
CHANGES_FILE = "context_changes.json"


@dataclass(frozen=True, slots=True)
class ContextPath:
    root: Path  # resolved
    writable: bool
    protected: tuple[Path, ...]  # resolved

    def protects(self, real: Path) -> bool:
        if any(real.is_relative_to(p) for p in self.protected):
            return True
        if real == self.root:
            return False
        return any(part in ALWAYS_PROTECTED for part in real.relative_to(self.root).parts)


@dataclass(frozen=True, slots=True)
class ContextChanges:
    """Files (absolute, resolved paths) a run created, modified or deleted in context paths."""

    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.created or self.modified or self.deleted)

    def lines(self) -> list[str]:
        rows = [("created", self.created), ("modified", self.modified), ("deleted", self.deleted)]
        return [f"  {what}: {path}" for what, paths in rows for path in paths]

    def to_json(self) -> dict[str, list[str]]:
        return {
            "created": list(self.created),
            "modified": list(self.modified),
            "deleted": list(self.deleted),
        }


_Stat = tuple[int, int, int]


@dataclass
class ContextPaths:
    paths: tuple[ContextPath, ...]
    _before: dict[Path, _Stat] = field(default_factory=dict)
    _journal: dict[Path, str | None] = field(default_factory=dict)  # hash before; None: absent

    @classmethod
    def of(cls, entries: Sequence[ContextPathConfig]) -> ContextPaths:
        """Raises ConfigError for a context path that holds HOME (every credential of the
        user's would be in reach). One that holds the project's `.massgen` is narrowed:
        `.massgen` stays out of it (never read, never written)."""
        paths = []
        home = Path(os.path.realpath(os.path.expanduser("~")))
        for index, entry in enumerate(entries):
            root = Path(os.path.realpath(entry.path))
            if holds_home(root, home):
                raise ConfigError(
                    f"context path `{entry.path}` holds your home directory ({home}), and "
                    "with it your SSH keys, tokens and massgen's own config",
                    path=f"orchestrator.context_paths[{index}].path",
                    fix="Name the project directory (or the files) the agents need instead",
                )
            protected = tuple(
                Path(os.path.realpath(os.path.join(root, p))) for p in entry.protected_paths
            )
            paths.append(ContextPath(root, entry.permission == "write", protected))
        return cls(tuple(paths))

    def __bool__(self) -> bool:
        return bool(self.paths)

    def find(self, real: Path) -> ContextPath | None:
        """The deepest context path holding `real` (already resolved), if any."""
        holding = [c for c in self.paths if real.is_relative_to(c.root)]
        return max(holding, key=lambda c: len(c.root.parts), default=None)

    def refusal(self, real: Path, phase: str) -> str | None:
        """Why `real` (resolved, inside a context path) may not be changed now, or None."""
        context = self.find(real)
        if context is None:
            return "it is not in a context path."
        if phase != "presentation":
            return (
                "context paths are read-only while agents coordinate; only the final "
                "presenter may write to them (and only where the user allowed it). "
                "Work in your workspace instead."
            )
        if not context.writable:
            return "this context path is read-only (`permission: read`)."
        if context.protects(real):
            return "this path is protected; it is never written."
        return None

    def describe(self) -> str:
        """The sentence the file tools' descriptions carry."""
        rows = ", ".join(
            f"`{c.root}`" + (" (the final presenter may write)" if c.writable else "")
            for c in self.paths
        )
        return f" The user's context paths, read them by absolute path: {rows}."

    # --- what changed -----------------------------------------------------------------

    def baseline(self) -> None:
        self._before = dict(self._stats())
        self._journal.clear()

    def journal(self, real: Path) -> None:
        """Before the file tools first change `real`: remember its content."""
        if real not in self._journal:
            self._journal[real] = _hash(real)

    def changes(self) -> ContextChanges:
        after = dict(self._stats())
        found: dict[str, list[str]] = {"created": [], "modified": [], "deleted": []}
        for path in sorted(set(after) | set(self._before) | set(self._journal)):
            before: object
            now: object
            if path in self._journal:  # by content
                before, now = self._journal[path], _hash(path)
            else:  # by stat
                before, now = self._before.get(path), after.get(path)
            if before == now:
                continue
            kind = "created" if before is None else "deleted" if now is None else "modified"
            found[kind].append(str(path))
        return ContextChanges(*(tuple(found[k]) for k in ("created", "modified", "deleted")))

    def _stats(self) -> Iterable[tuple[Path, _Stat]]:
        for context in self.paths:
            if context.root.is_file():
                st = context.root.stat()
                yield context.root, (st.st_size, st.st_mtime_ns, st.st_ino)
                continue
            if not context.root.is_dir():
                continue
            for rel, st in walk(context.root):
                if stat.S_ISREG(st.st_mode):  # `walk` lstats: a symlink is not followed
                    yield context.root / rel, (st.st_size, st.st_mtime_ns, st.st_ino)


def save_changes(changes: ContextChanges, log_dir: Path) -> Path:
    target = log_dir / CHANGES_FILE
    target.write_text(json.dumps(changes.to_json(), indent=2) + "\n", encoding="utf-8")
    return target


def _hash(path: Path) -> str | None:
    """The content hash of a regular file (read by descriptor, never through a link of
    its last name, never a FIFO), or None when there is none."""
    try:
        fd = safe_open.open_regular(None, path)
    except (FileNotFoundError, NotADirectoryError, safe_open.Unsafe):
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:  # a link: not a file the tools would change
            return None
        raise
    try:
        hasher = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            hasher.update(chunk)
        return hasher.hexdigest()
    finally:
        os.close(fd)
