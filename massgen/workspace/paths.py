"""Where a path a model wrote points: into its own workspace, or into a peer's snapshot.

    src/app.py               the agent's own workspace (writable)
    peers/agent2.3/src/a.py  the snapshot of answer agent2.3 (read-only, from the store)

A workspace path is resolved as the OS would (symlinks, `..`, an absolute path) and
refused unless it lands inside the workspace. A peer path never touches the filesystem:
it names a manifest entry, so nothing it says can escape. Messages repeat the path as
the model wrote it and never show a real directory (which names the agent).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

PEERS = "peers"


class Refused(Exception):
    """A path the tools will not touch; the message is for the model."""


@dataclass(frozen=True, slots=True)
class Own:
    path: Path  # resolved, inside the workspace
    rel: str  # relative to the workspace, `/`-separated; "" for its root


@dataclass(frozen=True, slots=True)
class Peer:
    label: str  # "" for `peers/` itself
    rel: str  # inside that snapshot; "" for its root


Target = Own | Peer


def locate(root: Path, raw: str) -> Target:
    """Raises Refused for a path outside the workspace (and outside `peers/`)."""
    raw = raw or "."
    if "\x00" in raw:
        raise Refused("a path may not contain NUL characters.")
    if not os.path.isabs(raw):
        parts = posixpath.normpath(raw.replace("\\", "/")).split("/")
        if parts[0] == PEERS:
            return Peer(parts[1] if len(parts) > 1 else "", "/".join(parts[2:]))
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(os.path.join(root, raw)))
    if not real.is_relative_to(real_root):
        raise Refused(
            f"`{raw}` is outside your workspace. Use a path relative to your workspace, "
            f"or `{PEERS}/<label>/...` to read another answer's files."
        )
    rel = real.relative_to(real_root).as_posix()
    return Own(real, "" if rel == "." else rel)


def own(root: Path, raw: str) -> Own:
    """A path the agent may change. Raises Refused for a peer path or one outside."""
    target = locate(root, raw)
    if isinstance(target, Peer):
        raise Refused(
            f"`{raw}` is another answer's snapshot, which is read-only. Use "
            "`copy_from_peer` to copy it into your workspace first."
        )
    if not target.rel:
        raise Refused("that is your workspace itself; name a file inside it.")
    return target
