"""Where a path a model wrote points: into its own workspace, or into a peer's snapshot.

    src/app.py               the agent's own workspace (writable)
    peers/agent2.3/src/a.py  the snapshot of answer agent2.3 (read-only, from the store)
    previous/src/a.py        the previous chat turn's final workspace (read-only, likewise)

A context path of the user's (`workspace/context.py`) is named by its absolute path:

    /home/me/site/index.html  readable by all; writable by the final presenter only, and
                              only where the user allowed it

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from massgen.workspace.context import ContextPaths

PEERS = "peers"
PREVIOUS = "previous"


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


@dataclass(frozen=True, slots=True)
class Previous(Peer):
    """The previous chat turn's final workspace: read like a snapshot labelled `previous`."""


@dataclass(frozen=True, slots=True)
class Context(Own):
    """A path in one of the user's context paths; `rel` is its absolute path, as shown."""


Target = Own | Peer


def locate(root: Path, raw: str, contexts: ContextPaths | None = None) -> Target:
    """Raises Refused for a path outside the workspace, `peers/` and the context paths.
    The workspace wins where a context path holds it."""
    raw = raw or "."
    if "\x00" in raw:
        raise Refused("a path may not contain NUL characters.")
    if not os.path.isabs(raw):
        parts = posixpath.normpath(raw.replace("\\", "/")).split("/")
        if parts[0] == PEERS:
            return Peer(parts[1] if len(parts) > 1 else "", "/".join(parts[2:]))
        if parts[0] == PREVIOUS:
            return Previous(PREVIOUS, "/".join(parts[1:]))
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(os.path.join(root, raw)))
    if not real.is_relative_to(real_root):
        if contexts is not None and contexts.find(real) is not None:
            return Context(real, str(real))
        raise Refused(
            f"`{raw}` is outside your workspace. Use a path relative to your workspace, "
            f"or `{PEERS}/<label>/...` to read another answer's files."
        )
    rel = real.relative_to(real_root).as_posix()
    return Own(real, "" if rel == "." else rel)


def own(
    root: Path, raw: str, contexts: ContextPaths | None = None, phase: str = "coordination"
) -> Own:
    """A path the agent may change. Raises Refused for a peer path, one outside, and a
    context path that may not be written now (`ContextPaths.refusal`)."""
    target = locate(root, raw, contexts)
    if isinstance(target, Context):
        assert contexts is not None
        refusal = contexts.refusal(target.path, phase)
        if refusal is not None:
            raise Refused(f"`{raw}`: {refusal}")
        return target
    if isinstance(target, Previous):
        raise Refused(
            f"`{raw}` is the previous turn's final workspace, which is read-only. Use "
            "`copy_from_peer` to copy it into your workspace first."
        )
    if isinstance(target, Peer):
        raise Refused(
            f"`{raw}` is another answer's snapshot, which is read-only. Use "
            "`copy_from_peer` to copy it into your workspace first."
        )
    if not target.rel:
        raise Refused("that is your workspace itself; name a file inside it.")
    return target
