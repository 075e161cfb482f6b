"""What an answer changed in its agent's workspace: the files, and a bounded unified diff.

Two snapshots of one agent's workspace (its previous answer's, or nothing for its first)
are compared by manifest, so unchanged files cost nothing; only the text of changed files
is read back from the store, and only up to `MAX_FILE_BYTES` each. The result rides on
`AnswerPublished` (`files`, `diff`) so every view and the log show the same change.

    files: ("+ src/app.py", "~ README.md", "- old.txt")
    diff:  "--- a/README.md\\n+++ b/README.md\\n@@ -1 +1 @@\\n-old\\n+new\\n"
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from massgen.core.types import FileChanges
from massgen.workspace.store import Entry, Manifest, Store

MAX_FILES = 200  # file lines listed; the rest are counted in one last line
MAX_DIFF_CHARS = 8000  # of the whole diff; a cut diff ends with a line saying so
MAX_FILE_BYTES = 256 * 1024  # a larger (or binary) file is listed, not diffed


def between(store: Store, before: Manifest | None, after: Manifest) -> FileChanges:
    """The change from `before` (None: an empty workspace) to `after`."""
    old = before.files if before is not None else {}
    new = after.files
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(p for p in set(old) & set(new) if old[p].hash != new[p].hash)
    lines = [f"+ {p}" for p in added] + [f"~ {p}" for p in changed] + [f"- {p}" for p in removed]
    if len(lines) > MAX_FILES:
        lines = [*lines[:MAX_FILES], f"… and {len(lines) - MAX_FILES} more"]
    paths = sorted([*added, *changed, *removed])
    return FileChanges(tuple(lines), _diff(store, paths, old, new))


def _diff(
    store: Store, paths: list[str], old: Mapping[str, Entry], new: Mapping[str, Entry]
) -> str:
    out: list[str] = []
    size = 0
    for path in paths:
        part = _file_diff(store, path, old.get(path), new.get(path))
        if size + len(part) > MAX_DIFF_CHARS:
            out.append(f"… the diff is cut at {MAX_DIFF_CHARS} characters\n")
            break
        out.append(part)
        size += len(part)
    return "".join(out)


def _file_diff(store: Store, path: str, old: Entry | None, new: Entry | None) -> str:
    before, after = _text(store, old), _text(store, new)
    if before is None or after is None:
        what = "changed" if old and new else ("added" if new else "removed")
        return f"Binary or large file {path} {what}\n"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _text(store: Store, entry: Entry | None) -> str | None:
    """The file's text; "" for no file; None when it is too large or not UTF-8 text."""
    if entry is None:
        return ""
    if entry.size > MAX_FILE_BYTES:
        return None
    try:
        data = store.read(entry)
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
