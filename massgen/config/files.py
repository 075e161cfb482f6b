"""Where a file a config names is: beside the config file, else from the working directory
(as the predecessor's users ran its configs from its checkout)."""

from __future__ import annotations

from pathlib import Path


def find_file(path: str, source: str) -> Path | None:
    """The resolved file `path` names, or None when there is no such file."""
    given = Path(path).expanduser()
    beside = Path(source).parent / given if not given.is_absolute() else given
    for candidate in (beside, given):
        if candidate.is_file():
            return candidate.resolve()
    return None
