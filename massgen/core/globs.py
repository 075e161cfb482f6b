"""Gitignore-style globs as regular expressions, shared by the snapshot's `.gitignore`
matcher (`workspace/ignore.py`), the file tools' `pattern` (`workspace/files.py`) and the
permission rules' paths (`permissions/rules.py`)."""

from __future__ import annotations

import re


def translate(glob: str) -> str:
    """The regular expression (to `fullmatch` a `/`-separated path) for `glob`: `*` and
    `?` stay inside one path segment, `**` crosses segments, `**/` is zero or more
    directories."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)
