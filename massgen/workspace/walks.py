"""What the file tools see of a directory: listings and walks, by descriptor (and the
same of a snapshot, by its manifest).

A walk lists directories relative to an opened root, never enters a link, leaves out
what `.gitignore` ignores, and leaves out every secret (`secrets.py`) while saying so in
the tool's output; file contents are read by descriptor, bounded in bytes.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterator, Mapping

from massgen.core import safe_open
from massgen.core.secrets import secret_name
from massgen.workspace.ignore import Ignore
from massgen.workspace.store import Entry

MAX_MATCHES = 100
MAX_GREP_FILE_BYTES = 1024 * 1024


def listing(root_fd: int, rel: str, raw: str) -> list[str]:
    """The rows of one directory, listed by descriptor; a secret is named, never read."""
    try:
        fd = safe_open.open_beneath(root_fd, rel, os.O_RDONLY | os.O_DIRECTORY)
    except NotADirectoryError:
        raise ValueError(f"`{raw}` is not a directory.") from None
    try:
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
            return [_row(e.name, e, f"{rel}/{e.name}" if rel else e.name) for e in entries]
    finally:
        os.close(fd)


def _row(name: str, entry: os.DirEntry[str], rel: str) -> str:
    if entry.is_symlink():
        return f"{name}@"
    if entry.is_dir(follow_symlinks=False):
        return f"{name}/"
    size = f"{name}  {entry.stat(follow_symlinks=False).st_size:,} bytes"
    return f"{size}  (secret: never read)" if secret_name(rel) else size


def walk_files(
    root_fd: int, under: str, raw: str, shown_base: str, left: list[str]
) -> Iterator[tuple[str, str, Callable[[], bytes | None]]]:
    """The files beneath `under` (a directory beneath `root_fd`): gitignored ones and
    links left out silently, secrets into `left`; contents read by descriptor."""
    try:
        fd = safe_open.open_beneath(root_fd, under, os.O_RDONLY | os.O_DIRECTORY)
    except NotADirectoryError:
        raise ValueError(f"`{raw}` is not a directory.") from None
    try:
        ignore = Ignore.of_fd(fd)

        def skip(rel: str, is_dir: bool) -> bool:
            if ignore.ignored(rel, is_dir=is_dir):
                return True
            if secret_name(f"{rel}/x" if is_dir else rel):
                left.append(f"{shown_base}/{rel}" if shown_base else rel)
                return True
            return False

        walk = safe_open.Walk(fd, skip)
        for found in walk:
            shown = f"{shown_base}/{found.rel}" if shown_base else found.rel
            yield shown, found.rel, functools.partial(_small_file, found)
        if walk.truncated:
            left.append(
                f"[stopped after {safe_open.MAX_WALK_ENTRIES:,} entries or "
                f"{safe_open.MAX_WALK_DEPTH} levels; narrow the path]"
            )
    finally:
        os.close(fd)


def _small_file(found: safe_open.Found) -> bytes | None:
    """A walked regular file's bytes, or None (too big, a link, a FIFO, changed since)."""
    if not stat.S_ISREG(found.stat.st_mode) or found.stat.st_size > MAX_GREP_FILE_BYTES:
        return None
    try:
        return found.read(MAX_GREP_FILE_BYTES)
    except OSError:
        return None


def left_out(left: list[str]) -> str:
    stopped = [x for x in left if x.startswith("[")]
    secret = [x for x in left if not x.startswith("[")]
    note = "".join(f"\n{x}" for x in stopped)
    if secret:
        shown = ", ".join(secret[:10]) + (", ..." if len(secret) > 10 else "")
        note += f"\n[left out {len(secret)} secret file(s), never read: {shown}]"
    return note


def bounded(items: list[str], what: str, left: list[str] | None = None) -> str:
    note = left_out(left or [])
    if len(items) <= MAX_MATCHES:
        return "\n".join(items) + note if items else ""
    shown = "\n".join(items[:MAX_MATCHES])
    return shown + f"\n[more than {MAX_MATCHES} {what}; narrow it down]" + note


def peer_listing(files: Mapping[str, Entry], rel: str, raw: str) -> list[str]:
    """The rows of a directory `rel` of a snapshot (its manifest's `files`)."""
    prefix = f"{rel}/" if rel else ""
    names: dict[str, str] = {}
    for path, entry in files.items():
        if path.startswith(prefix):
            head, _, rest = path[len(prefix) :].partition("/")
            row = f"{head}/" if rest else f"{head}  {entry.size:,} bytes"
            names[head] = f"{row}  (secret: never read)" if secret_name(path) and not rest else row
    if not names and rel not in files:
        raise ValueError(f"`{raw}` is not a directory of that snapshot.")
    return [names[name] for name in sorted(names)]


def picked_files(files: Mapping[str, Entry], rel: str) -> tuple[dict[str, Entry], int]:
    """The snapshot's entries `rel` names (a file, or a directory's files by their path
    beneath it) less the secrets, and how many secrets were left out."""
    if rel in files:
        named = {"": files[rel]}
    else:
        prefix = f"{rel}/" if rel else ""
        named = {p[len(prefix) :]: e for p, e in files.items() if p.startswith(prefix)}
    base = f"{rel}/" if rel else ""
    kept = {r: e for r, e in named.items() if not secret_name(f"{base}{r}" if r else rel)}
    return kept, len(named) - len(kept)
