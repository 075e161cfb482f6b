"""Tool names the providers accept: `mcp__<server>__<tool>`, in `[A-Za-z0-9_-]`, at most
64 characters, and unique within one agent's toolbox.

A name that had to be cut or changed, and collides with another, gets a suffix derived
from the raw server and tool names, so it is stable from run to run.
"""

from __future__ import annotations

import hashlib
import re

MAX_LEN = 64
PREFIX = "mcp__"
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def raw_name(server: str, tool: str) -> str:
    """The name as the user writes it in a filter (before sanitising)."""
    return f"{PREFIX}{server}__{tool.removeprefix(PREFIX)}"


def exposed_names(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(server, tool) -> the name offered to the model, collision-free, in input order."""
    out: dict[tuple[str, str], str] = {}
    used: set[str] = set()
    for server, tool in pairs:
        name = _NOT_ALLOWED.sub("_", raw_name(server, tool))[:MAX_LEN]
        if name in used:
            name = _suffixed(name, f"{server}\0{tool}", used)
        used.add(name)
        out[(server, tool)] = name
    return out


def _suffixed(name: str, key: str, used: set[str]) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    for width in range(6, len(digest)):
        candidate = f"{name[: MAX_LEN - width - 1]}_{digest[:width]}"
        if candidate not in used:
            return candidate
    raise AssertionError("a sha256 prefix collided at every width")  # pragma: no cover
