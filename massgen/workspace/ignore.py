"""What a snapshot leaves out: `.git` and `.massgen` always, and what `.gitignore` says.

A small matcher for the common gitignore forms (comments, `!` negation, a trailing `/`
for directories, a leading or inner `/` anchoring to the root, `*`, `?`, `**`), read from
the workspace's top-level `.gitignore` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from massgen.core.globs import translate

ALWAYS = frozenset({".git", ".massgen"})


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
        try:
            text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        return cls(text.splitlines())

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
