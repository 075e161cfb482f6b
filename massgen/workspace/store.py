"""One content-addressed store per run, and snapshots as manifests into it.

    <root>/objects/ab/abcdef...   a file's bytes, named by their sha256 (stored once)
    <root>/manifests/agent2.3.json  path -> (hash, size, mode), keyed by the answer's label

An unchanged file is stored once across agents and rounds. Objects are copies, never
hardlinks to a workspace file: an agent that rewrites a file in place must not change
what its peers were shown. `Snapshotter` remembers each file's stat, so a re-snapshot
reads only the files that changed: its cost follows what changed, not the tree's size
(a file modified within `RACY_SECONDS` of being hashed is always read again).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from massgen.core import safe_open
from massgen.workspace.ignore import Ignore

_CHUNK = 1 << 20
# A file changed within this long of its hashing may change again without its stat
# changing (timestamps are coarse), so its hash is not reused ("racy git").
RACY_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Entry:
    hash: str
    size: int
    mode: int


@dataclass(frozen=True, slots=True)
class Limits:
    """What one snapshot may hold; a file past a limit is left out and listed as skipped."""

    max_file_bytes: int = 10 * 1024 * 1024
    max_files: int = 5000


@dataclass(frozen=True, slots=True)
class Manifest:
    files: Mapping[str, Entry] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # left out: too big, past the file cap, not a plain file

    def to_json(self) -> str:
        files = {p: [e.hash, e.size, e.mode] for p, e in sorted(self.files.items())}
        return json.dumps({"files": files, "skipped": list(self.skipped)}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        data = json.loads(text)
        files = {p: Entry(h, s, m) for p, (h, s, m) in data["files"].items()}
        return cls(files, tuple(data.get("skipped", ())))

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.files.values())


class Store:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "objects").mkdir(parents=True, exist_ok=True)
        (root / "manifests").mkdir(exist_ok=True)
        (root / "tmp").mkdir(exist_ok=True)

    def object_path(self, digest: str) -> Path:
        return self.root / "objects" / digest[:2] / digest

    def put(self, source: int) -> str:
        """Store the open file `source` (read once, not closed); return its hash."""
        hasher = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(dir=self.root / "tmp")
        try:
            with os.fdopen(fd, "wb") as out, os.fdopen(source, "rb", closefd=False) as src:
                while chunk := src.read(_CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
            digest = hasher.hexdigest()
            target = self.object_path(digest)
            if target.exists():
                return digest
            target.parent.mkdir(exist_ok=True)
            os.replace(tmp, target)
            os.chmod(target, 0o444)
            return digest
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def read(self, entry: Entry) -> bytes:
        return self.object_path(entry.hash).read_bytes()

    def save(self, label: str, manifest: Manifest) -> None:
        """Atomically, so a reader never sees half a manifest."""
        target = self.root / "manifests" / f"{label}.json"
        fd, tmp = tempfile.mkstemp(dir=self.root / "tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(manifest.to_json())
        os.replace(tmp, target)

    def load(self, label: str) -> Manifest | None:
        try:
            return Manifest.from_json((self.root / "manifests" / f"{label}.json").read_text())
        except FileNotFoundError:
            return None

    def saved_at(self, label: str) -> float:
        """When the manifest of `label` was saved (its answer published); 0 if never."""
        try:
            return (self.root / "manifests" / f"{label}.json").stat().st_mtime
        except OSError:
            return 0.0

    def labels(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "manifests").glob("*.json"))

    def restore(self, manifest: Manifest, dest: Path) -> None:
        """Write the snapshot's files under `dest` (which should be new or empty)."""
        for relpath, entry in manifest.files.items():
            target = dest / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.read(entry))
            os.chmod(target, (entry.mode & 0o777) | 0o200)


_Stat = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


class Snapshotter:
    """Snapshots of one workspace; remembers what it stored, by stat, between calls."""

    def __init__(self, store: Store, root: Path, limits: Limits | None = None) -> None:
        self.store, self.root, self.limits = store, root, limits or Limits()
        self._known: dict[str, tuple[_Stat, str]] = {}  # only stats safe to trust
        self._racy_ns = int(RACY_SECONDS * 1e9)
        self.files_read = 0  # files hashed so far (the bench shows it follows what changed)
        self._root_fd = -1  # the workspace, opened while a snapshot is taken

    def take(self) -> Manifest:
        """Files are opened beneath the workspace's descriptor, never through a link, so a
        file swapped for a link (or a FIFO) since the walk is skipped, not followed."""
        files: dict[str, Entry] = {}
        skipped: list[str] = []
        self._root_fd = safe_open.open_root(self.root)
        try:
            for relpath, info in walk(self.root):
                if not stat.S_ISREG(info.st_mode) or info.st_size > self.limits.max_file_bytes:
                    skipped.append(relpath)
                    continue
                if len(files) >= self.limits.max_files:
                    skipped.append(relpath)
                    continue
                try:
                    digest = self._hash(relpath, info)
                except (safe_open.Unsafe, FileNotFoundError, NotADirectoryError):
                    skipped.append(relpath)  # changed into a link, a FIFO, or gone
                    continue
                files[relpath] = Entry(digest, info.st_size, info.st_mode & 0o777)
        finally:
            os.close(self._root_fd)
        return Manifest(files, tuple(skipped))

    def _hash(self, relpath: str, info: os.stat_result) -> str:
        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        known = self._known.get(relpath)
        if known is not None and known[0] == key:
            return known[1]
        fd = safe_open.open_regular(self._root_fd, relpath)
        try:
            digest = self.store.put(fd)
        finally:
            os.close(fd)
        self.files_read += 1
        if max(info.st_mtime_ns, info.st_ctime_ns) + self._racy_ns < time.time_ns():
            self._known[relpath] = (key, digest)
        else:
            self._known.pop(relpath, None)
        return digest


def walk(root: Path, limit: int = 200_000) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under `root` a snapshot considers, sorted, listed by directory
    descriptor and never following a symlink; ignored directories are not entered."""
    ignore = Ignore.of(root)
    fd = safe_open.open_root(root)
    try:
        for found in safe_open.Walk(fd, lambda rel, d: ignore.ignored(rel, is_dir=d), limit):
            yield found.rel, found.stat
    finally:
        os.close(fd)
