"""The file tools: one in-process toolbox, each tool declaring its effects as data.

Paths are relative to the calling agent's workspace (`ToolContext.workspace`); other
answers' snapshots are read-only under `peers/<label>/` and are read from the store, never
copied per viewer; so is the previous chat turn's final workspace, under `previous/`.
Writes land only inside the workspace (`paths.own`), or, for the final presenter, in a
context path the user made writable (`workspace/context.py`). `delete_file`
refuses a file the agent has neither read nor created during this run.

Every file is opened relative to a descriptor of its root (the workspace or the context
path), refusing a symlink at every component, and written through a temp file renamed
inside the opened parent (`safe_open`): a link swapped in after the check leads nowhere.
Secrets (`secrets.py`) are never read from a peer's snapshot or a context path, and walks
(`grep`, `glob`) leave them out everywhere, saying so.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from massgen.core import safe_open
from massgen.core.effects import Delete, Effect, Read, Write
from massgen.core.globs import translate as _translate
from massgen.core.secrets import secret_name
from massgen.core.toolbox import ToolContext, ToolResult, arguments_of
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.workspace.context import ContextPaths
from massgen.workspace.paths import (
    PEERS,
    PREVIOUS,
    Context,
    Own,
    Peer,
    Previous,
    Refused,
    locate,
    own,
)
from massgen.workspace.store import Entry, Manifest, Store
from massgen.workspace.walks import (
    MAX_GREP_FILE_BYTES,
    MAX_MATCHES,
    bounded,
    left_out,
    listing,
    peer_listing,
    picked_files,
    walk_files,
)

MAX_READ_LINES = 2000
MAX_READ_BYTES = 10 * 1024 * 1024  # read_file and edit_file; a snapshot's file limit too
_SNIFF = 8192


class PeerView(Protocol):
    """The published snapshots, by label, the previous chat turn's final workspace (if
    any), and the store that holds their files."""

    @property
    def store(self) -> Store: ...

    @property
    def previous(self) -> Manifest | None: ...

    def snapshots(self) -> Mapping[str, Manifest]: ...


def _spec(name: str, description: str, props: dict[str, Any], required: list[str], *, ro: bool):
    schema = {"type": "object", "properties": props, "required": required}
    annotations = ToolAnnotations(read_only=ro, destructive=name == "delete_file")
    return ToolSpec(name, description, schema, annotations)


_S = {"type": "string"}
_I = {"type": "integer", "minimum": 1}
_WHERE = (
    " Paths are relative to your workspace; other answers' files are read-only under "
    f"`{PEERS}/<label>/` (for example `{PEERS}/agent1.2/main.py`)."
)

SPECS = (
    _spec(
        "read_file",
        "Read a text file, optionally from line `offset` (1-based) for `limit` lines." + _WHERE,
        {"path": _S, "offset": _I, "limit": _I},
        ["path"],
        ro=True,
    ),
    _spec(
        "write_file",
        "Create or overwrite a file in your workspace.",
        {"path": _S, "content": _S},
        ["path", "content"],
        ro=False,
    ),
    _spec(
        "edit_file",
        "Replace the one exact occurrence of `old` with `new` in a file of your workspace.",
        {"path": _S, "old": _S, "new": _S},
        ["path", "old", "new"],
        ro=False,
    ),
    _spec("list_dir", "List a directory." + _WHERE, {"path": _S}, [], ro=True),
    _spec(
        "glob",
        "Files matching a glob pattern such as `**/*.py`, under `path`." + _WHERE,
        {"pattern": _S, "path": _S},
        ["pattern"],
        ro=True,
    ),
    _spec(
        "grep",
        "Lines matching a regular expression in the text files under `path`." + _WHERE,
        {"pattern": _S, "path": _S},
        ["pattern"],
        ro=True,
    ),
    _spec(
        "delete_file",
        "Delete one file of your workspace that you have read or created in this run.",
        {"path": _S},
        ["path"],
        ro=False,
    ),
    _spec(
        "copy_from_peer",
        f"Copy a file or directory from `{PEERS}/<label>/...` into your workspace at `dest` "
        "(default: the same path inside your workspace).",
        {"source": _S, "dest": _S},
        ["source"],
        ro=False,
    ),
)
_NAMES = frozenset(spec.name for spec in SPECS)
_PREVIOUS_NOTE = (
    f" The previous turn's final workspace is read-only under `{PREVIOUS}/` (for example "
    f"`{PREVIOUS}/main.py`); `copy_from_peer` copies from it too."
)


@dataclass(frozen=True, slots=True)
class _Call:
    name: str
    args: dict[str, Any]
    root: Path
    agent: str
    phase: str

    def text(self, key: str, default: str | None = None) -> str:
        value = self.args.get(key, default)
        if not isinstance(value, str):
            raise ValueError(f"`{key}` must be a string.")
        return value


class FileTools:
    """The file tools over `ctx.workspace` and `view`. One instance serves a whole team:
    what each agent read or created is remembered per agent (read-before-delete)."""

    def __init__(self, view: PeerView, contexts: ContextPaths | None = None) -> None:
        self.view = view
        self.contexts = contexts or None
        self._touched: dict[str, set[Path]] = {}
        where = self.contexts.describe() if self.contexts is not None else ""
        if view.previous is not None:
            where += _PREVIOUS_NOTE
        self._specs = SPECS
        if where:
            self._specs = tuple(replace(s, description=s.description + where) for s in SPECS)

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def _own(self, c: _Call, raw: str) -> Own:
        """A path this call may change; a context path's content is journaled first."""
        target = own(c.root, raw, self.contexts, c.phase)
        if isinstance(target, Context) and self.contexts is not None:
            self.contexts.journal(target.path)
        return target

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        c = self._parse(call, ctx)
        paths = [c.text(k) for k in ("path", "source", "dest") if k in c.args]
        if c.name == "copy_from_peer":
            source = _peer_or_none(c.root, c.text("source"))
            dest = c.args.get("dest") or (source.rel if source else "")
            return (*self._reads(c.root, c.text("source")), Write(self._real(c.root, dest)))
        if c.name in ("write_file", "edit_file"):
            return (Write(self._real(c.root, paths[0])),)
        if c.name == "delete_file":
            return (Delete(self._real(c.root, paths[0])),)
        return self._reads(c.root, paths[0] if paths else ".")

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        try:
            c = self._parse(call, ctx)
            text = await asyncio.to_thread(getattr(self, f"_{c.name}"), c)
        except (Refused, ValueError, OSError) as error:
            return ToolResult.error(call, _message(error))
        return ToolResult(call.id, text)

    # --- parsing and effects ----------------------------------------------------------

    def _parse(self, call: ToolCall, ctx: ToolContext) -> _Call:
        if call.name not in _NAMES:
            raise ValueError(f"tool `{call.name}` is not available.")
        if ctx.workspace is None:
            raise ValueError("this agent has no workspace.")
        args = arguments_of(call.arguments)
        spec = next(s for s in SPECS if s.name == call.name)
        missing = [k for k in spec.parameters["required"] if k not in args]
        if missing:
            raise ValueError(f"missing argument(s): {', '.join(missing)}.")
        return _Call(call.name, args, ctx.workspace, ctx.agent, ctx.phase)

    @staticmethod
    def _real(root: Path, raw: str) -> Path:
        return Path(os.path.realpath(os.path.join(root, raw)))

    def _reads(self, root: Path, raw: str) -> tuple[Effect, ...]:
        target = _peer_or_none(root, raw)
        if target is not None:
            manifest = self._manifest(target)
            entry = manifest.files.get(target.rel) if manifest else None
            if entry is not None:
                return (Read(self.view.store.object_path(entry.hash)),)
            return (Read(self.view.store.root / "manifests"),)
        return (Read(self._real(root, raw)),)

    # --- the tools --------------------------------------------------------------------

    def _read_file(self, c: _Call) -> str:
        target = self._readable(c.root, c.text("path"))
        if isinstance(target, Peer):
            data = self._peer_bytes(target, c.text("path"))
        else:
            with self._opened(c.root, target) as (fd, rel):
                data = safe_open.read_beneath(fd, rel, MAX_READ_BYTES)
            self._touch(c.agent, target.path)
        if b"\x00" in data[:_SNIFF]:
            raise ValueError(
                f"`{c.text('path')}` is a binary file ({len(data):,} bytes); "
                "read_file reads text only."
            )
        try:
            lines = data.decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            message = f"`{c.text('path')}` is not UTF-8 text; read_file reads text only."
            raise ValueError(message) from None
        offset, limit = int(c.args.get("offset", 1)), int(c.args.get("limit", MAX_READ_LINES))
        if offset < 1 or limit < 1:
            raise ValueError("`offset` and `limit` must be at least 1.")
        shown = lines[offset - 1 : offset - 1 + min(limit, MAX_READ_LINES)]
        body = "".join(shown)
        if offset > 1 or len(shown) < len(lines):
            end = offset - 1 + len(shown)
            body += f"\n[lines {offset}-{end} of {len(lines)}; use offset/limit for more]"
        return body

    def _readable(self, root: Path, raw: str) -> Own | Peer:
        """Where `raw` points, refused if it names a secret outside the agent's own
        workspace (whose names are its own) or the `.massgen` of a context path."""
        target = locate(root, raw, self.contexts)
        if isinstance(target, Context):
            why = self._context_secret(target.path)
        else:
            why = secret_name(target.rel) if isinstance(target, Peer) else None
        if why:
            raise Refused(f"`{raw}`: {why}; secrets are never read.")
        return target

    def _context_secret(self, real: Path) -> str | None:
        assert self.contexts is not None
        context = self.contexts.find(real)
        rel = real.relative_to(context.root).as_posix() if context else real.as_posix()
        if ".massgen" in rel.split("/"):
            return "massgen's own files (runs, logs) are not part of a context path"
        return secret_name(real.as_posix())

    @contextmanager
    def _opened(self, root: Path, target: Own) -> Iterator[tuple[int, str]]:
        """A descriptor of the root `target` lies in, and its path beneath it."""
        if isinstance(target, Context):
            context = self.contexts.find(target.path) if self.contexts else None
            assert context is not None
            base, rel = context.root, target.path.relative_to(context.root).as_posix()
            if not context.root.is_dir():  # a context path that is one file
                base, rel = context.root.parent, context.root.name
        else:
            base, rel = Path(os.path.realpath(root)), target.rel
        fd = safe_open.open_root(base)
        try:
            yield fd, "" if rel == "." else rel
        finally:
            os.close(fd)

    def _peer_bytes(self, target: Peer, raw: str) -> bytes:
        entry = self._snapshot(target, raw).files.get(target.rel)
        if entry is None:
            raise ValueError(f"`{raw}` is not a file of that snapshot.")
        return self.view.store.read(entry)

    def _manifest(self, target: Peer) -> Manifest | None:
        if isinstance(target, Previous):
            return self.view.previous
        return self.view.snapshots().get(target.label)

    def _snapshot(self, target: Peer, raw: str) -> Manifest:
        manifest = self._manifest(target)
        if manifest is None and isinstance(target, Previous):
            raise ValueError(f"`{raw}`: there is no previous turn's workspace in this chat.")
        if manifest is None:
            known = ", ".join(sorted(self.view.snapshots())) or "none yet"
            raise ValueError(f"`{raw}`: no snapshot of that name (published: {known}).")
        return manifest

    def _write_file(self, c: _Call) -> str:
        target = self._own(c, c.text("path"))
        content = c.text("content")
        with self._opened(c.root, target) as (fd, rel):
            safe_open.write_atomic(fd, rel, content.encode("utf-8"))
        self._touch(c.agent, target.path)
        return f"Wrote {target.rel} ({len(content.encode('utf-8')):,} bytes)."

    def _edit_file(self, c: _Call) -> str:
        target = self._own(c, c.text("path"))
        old, new = c.text("old"), c.text("new")
        if not old:
            raise ValueError("`old` must not be empty.")
        with self._opened(c.root, target) as (fd, rel):
            text = safe_open.read_beneath(fd, rel, MAX_READ_BYTES).decode("utf-8")
        count = text.count(old)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise ValueError(
                f"`old` {where} in {target.rel}; it must match exactly once "
                "(include more surrounding text to make it unique)."
            )
        with self._opened(c.root, target) as (fd, rel):
            safe_open.write_atomic(fd, rel, text.replace(old, new).encode("utf-8"))
        self._touch(c.agent, target.path)
        return f"Edited {target.rel}."

    def _list_dir(self, c: _Call) -> str:
        raw = c.text("path", ".")
        target = self._readable(c.root, raw)
        if isinstance(target, Peer):
            rows = self._peer_listing(target, raw)
        else:
            with self._opened(c.root, target) as (root_fd, rel):
                rows = listing(root_fd, rel, raw)
            if not target.rel and self.view.previous is not None:
                rows.insert(0, f"{PREVIOUS}/  (read-only: the previous turn's final workspace)")
            if not target.rel and self.view.snapshots():
                rows.insert(0, f"{PEERS}/  (read-only: other answers' files)")
        return "\n".join(rows) or "(empty)"

    def _peer_listing(self, target: Peer, raw: str) -> list[str]:
        if not target.label:
            return [f"{label}/" for label in sorted(self.view.snapshots())]
        return peer_listing(self._snapshot(target, raw).files, target.rel, raw)

    def _glob(self, c: _Call) -> str:
        raw = c.text("path", ".")
        pattern = re.compile(_translate(c.text("pattern").lstrip("/")))
        left: list[str] = []
        hits = [s for s, rel, _ in self._files(c.root, raw, left) if pattern.fullmatch(rel)]
        return bounded(hits, "files", left) or "no files match." + left_out(left)

    def _grep(self, c: _Call) -> str:
        raw = c.text("path", ".")
        try:
            pattern = re.compile(c.text("pattern"))
        except re.error as error:
            raise ValueError(f"invalid regular expression: {error}.") from None
        hits: list[str] = []
        left: list[str] = []
        for shown, _rel, load in self._files(c.root, raw, left):
            data = load()
            if data is None or b"\x00" in data[:_SNIFF]:
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{shown}:{number}: {line[:300]}")
                    if len(hits) > MAX_MATCHES:
                        return bounded(hits, "matches", left)
        return bounded(hits, "matches", left) or "no matches." + left_out(left)

    def _files(
        self, root: Path, raw: str, left: list[str]
    ) -> Iterator[tuple[str, str, Callable[[], bytes | None]]]:
        """(path as the model writes it, path under `raw`, its bytes) for every file but
        the secrets, whose shown paths go to `left` (with a note if the walk stopped)."""
        target = self._readable(root, raw)
        if isinstance(target, Peer):
            if isinstance(target, Previous):
                views = [(PREVIOUS, self._snapshot(target, raw))]
            else:
                labels = [target.label] if target.label else sorted(self.view.snapshots())
                views = [(f"{PEERS}/{x}", self._snapshot(Peer(x, ""), raw)) for x in labels]
            base = target.rel if target.label else ""
            for shown, manifest in views:
                for path, entry in sorted(manifest.files.items()):
                    if not base or path.startswith(f"{base}/"):
                        rel = path[len(base) + 1 :] if base else path
                        if secret_name(path):
                            left.append(f"{shown}/{path}")
                            continue
                        yield f"{shown}/{path}", rel, self._loader(entry)
            return
        with self._opened(root, target) as (root_fd, under):
            yield from walk_files(root_fd, under, raw, target.rel, left)

    def _loader(self, entry: Entry) -> Callable[[], bytes | None]:
        if entry.size > MAX_GREP_FILE_BYTES:
            return lambda: None
        return lambda: self.view.store.read(entry)

    def _delete_file(self, c: _Call) -> str:
        target = self._own(c, c.text("path"))
        with self._opened(c.root, target) as (fd, rel):
            try:
                regular = stat.S_ISREG(safe_open.lstat_beneath(fd, rel).st_mode)
            except (FileNotFoundError, NotADirectoryError):
                regular = False
            if not regular:
                raise ValueError(f"`{target.rel}` is not a file; delete_file removes one file.")
            if target.path not in self._touched.get(c.agent, set()):
                raise ValueError(
                    f"refusing to delete {target.rel}: read it first (you have "
                    "neither read nor created it in this run)."
                )
            safe_open.unlink_file(fd, rel)
        return f"Deleted {target.rel}."

    def _copy_from_peer(self, c: _Call) -> str:
        source_raw = c.text("source")
        source = locate(c.root, source_raw)
        if not isinstance(source, Peer) or not source.label:
            raise ValueError(f"`source` must be a path under `{PEERS}/<label>/` or `{PREVIOUS}/`.")
        picked, secret = picked_files(self._snapshot(source, source_raw).files, source.rel)
        if not picked:
            why = "holds only secrets, never copied" if secret else "is not in that snapshot"
            raise ValueError(f"`{source_raw}` {why}.")
        dest = self._own(c, c.text("dest", "") or source.rel or ".")
        for rel, entry in picked.items():
            target = self._own(c, f"{dest.rel}/{rel}" if rel else dest.rel)
            with self._opened(c.root, target) as (fd, under):
                safe_open.write_atomic(fd, under, self.view.store.read(entry), mode=entry.mode)
            self._touch(c.agent, target.path)
        note = f" Left out {secret} secret file(s), never copied." if secret else ""
        return f"Copied {len(picked)} file(s) to {dest.rel}.{note}"

    def _touch(self, agent: str, path: Path) -> None:
        self._touched.setdefault(agent, set()).add(path)


def _peer_or_none(root: Path, raw: str) -> Peer | None:
    try:
        target = locate(root, raw)
    except Refused:
        return None  # outside: its effect names the real path, and the call is refused
    return target if isinstance(target, Peer) else None


def _message(error: Exception) -> str:
    if isinstance(error, FileNotFoundError):
        return "no such file or directory."
    if isinstance(error, IsADirectoryError):
        return "that is a directory."
    if isinstance(error, OSError) and error.errno in (errno.ELOOP, errno.EXDEV):
        return "a symlink is on the way (or the path leaves its root); links are never followed."
    if isinstance(error, safe_open.Unsafe):
        return f"{error.strerror}."
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__  # never the path: it names the agent
    return str(error)
