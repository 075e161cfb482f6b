"""What a snapshot leaves out: `.git` and `.massgen` always, and what `.gitignore` says.

A small matcher for the common gitignore forms (comments, `!` negation, a trailing `/`
for directories, a leading or inner `/` anchoring to the root, `*`, `?`, `**`), read from
the workspace's top-level `.gitignore` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from massgen.core import safe_open
from massgen.core.globs import translate

ALWAYS = frozenset({".git", ".massgen"})
_MAX_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    negate: bool
    dir_only: bool


class Ignore:
    def __init__(self, lines: list[str]) -> None:
        self._rules = [rule for line in lines if (rule := _rule(line)) is not None]

    @classmethod
    def of(cls, root: Path) -> Ignore:
        try:  # never through a link, never a FIFO, never more than a megabyte
            data = safe_open.read_beneath(None, root / ".gitignore", _MAX_BYTES)
        except OSError:
            data = b""
        text = data.decode("utf-8", errors="replace")
        return cls(text.splitlines())

    @classmethod
    def of_fd(cls, dir_fd: int) -> Ignore:
        """The `.gitignore` of an opened directory (not through a link, at most 1 MB)."""
        try:
            data = safe_open.read_beneath(dir_fd, ".gitignore", _MAX_BYTES)
        except OSError:
            data = b""
        return cls(data.decode("utf-8", errors="replace").splitlines())

    def ignored(self, relpath: str, *, is_dir: bool) -> bool:
        """`relpath` uses `/`; a directory's contents are ignored with it."""
        if relpath.split("/")[0] in ALWAYS:
            return True
        verdict = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.pattern.fullmatch(relpath):
                verdict = not rule.negate
        return verdict


def _rule(line: str) -> _Rule | None:
    line = line.rstrip()
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    line = line[1:] if negate else line
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    body = translate(line)
    prefix = "" if anchored else "(?:.*/)?"
    return _Rule(re.compile(prefix + body), negate, dir_only)
