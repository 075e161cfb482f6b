"""Paths as the OS would open them: the engine decides on nothing else.

`canonical` expands `~` and `$HOME`, joins a relative path to the directory it is
relative to, resolves `..` and every symlink, and refuses a name with NUL or a newline.
`Zone` answers "is this path under that root" the way the file system compares names:
case-insensitively where the file system ignores case. `linked_elsewhere` flags a file
with other hard links, whose other names may lie outside every managed path.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from massgen.core.secrets import home_secrets, secret_path

_HOME_VAR = re.compile(r"^\$(HOME\b|\{HOME\})")


class UnsafePath(ValueError):
    """A path the engine refuses to reason about (NUL, newline, an unknown variable)."""


def home() -> Path:
    return Path(os.path.expanduser("~"))


def canonical(raw: str | os.PathLike[str], base: Path | None = None) -> Path:
    """The real, absolute path `raw` names (relative to `base`, else the cwd).

    Raises:
        UnsafePath: NUL or newline in the name, or a variable other than `$HOME`.
    """
    text = os.fspath(raw)
    if "\x00" in text or "\n" in text or "\r" in text:
        raise UnsafePath("a path may not contain NUL or newline characters")
    text = _HOME_VAR.sub(lambda _: str(home()), text)
    if "$" in text and re.search(r"\$[A-Za-z_{(]", text):
        raise UnsafePath(f"`{text}` holds a variable whose value is unknown here")
    if text == "~" or text.startswith("~/"):
        text = str(home()) + text[1:]
    path = Path(text)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return Path(os.path.realpath(path))


def linked_elsewhere(path: Path) -> bool:
    """A regular file with more than one hard link: some other name of it may be outside."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_nlink > 1 and not os.path.isdir(path)


@functools.lru_cache(maxsize=256)
def case_insensitive(directory: Path) -> bool:
    """Whether the file system holding `directory` ignores case (probed, then cached)."""
    probe = directory
    while probe != probe.parent and not probe.exists():
        probe = probe.parent
    name = probe.name
    if not name or name.lower() == name.upper():
        return False
    swapped = probe.with_name(name.swapcase())
    try:
        return swapped.exists() and os.path.samefile(probe, swapped)
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class Zone:
    """A managed root (already canonical)."""

    root: Path

    def holds(self, path: Path) -> bool:
        if path.is_relative_to(self.root):
            return True
        if case_insensitive(self.root):
            return Path(str(path).casefold()).is_relative_to(Path(str(self.root).casefold()))
        return False


def around(protected: list[Path], workspace: Path | None) -> list[Path]:
    """`protected` with a path that holds the agent's own `workspace` (a context path of
    the project holds `.massgen`, where workspaces live) replaced by everything beside
    the way down to it: the workspace stays writable, the rest of it protected."""
    out: list[Path] = []
    for path in protected:
        if workspace is None or not Zone(path).holds(workspace):
            out.append(path)
            continue
        here = path
        parts = workspace.parts[len(path.parts) :]  # `holds` compared them, in any case
        for part in parts:
            try:
                out += [here / name for name in os.listdir(here) if name != part]
            except OSError:
                break
            here = here / part
    return out


class _Workspace(Protocol):
    def in_workspace(self, path: Path) -> bool: ...


def secret(path: Path, zones: _Workspace) -> str | None:
    """Why `path` (canonical) is a secret no rule may open, or None (`secrets.py` says
    what is secret). The agent's own workspace holds only what it made, so names there
    are its own."""
    if zones.in_workspace(path):
        return None
    real_home = Path(os.path.realpath(home()))
    if any(Zone(p).holds(path) for p in home_secrets(real_home)):  # any case, where so
        return f"`{path}` is in a directory of credentials"
    return secret_path(path, real_home)
