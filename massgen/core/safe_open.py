"""Files opened relative to a directory descriptor of their root, never through a symlink.

The file tools check a path, then use it. Between the two a command of the agent's can
swap a directory for a symlink (`renameat2(RENAME_EXCHANGE)` in a loop), so nothing here
resolves a name again after the check: a root is opened once, and every later open walks
down from that descriptor, refusing a symlink at every component. Where the kernel has
`openat2` (Linux 5.6+) one call does it (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`);
elsewhere each component is opened with `O_NOFOLLOW`, relative to the one before.

Reads take regular files only, opened `O_NONBLOCK` (a FIFO cannot block the thread),
checked with `fstat` on the open descriptor and bounded in bytes (a 3 GB sparse file is
refused by its size, never read). Writes create a temp file in the opened parent and
rename it there. Walks list directories by descriptor and never follow a link.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | _CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437}.get(platform.machine())
_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x02, 0x04, 0x08
_READ_CHUNK = 1 << 20
MAX_WALK_ENTRIES = 20_000
MAX_WALK_DEPTH = 64  # each level holds a descriptor open while the walk is below it


class Unsafe(OSError):
    """A path the tools will not open: a symlink on the way, a FIFO, a device, too big."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _probe_openat2() -> Callable[..., int] | None:
    """The libc `syscall` for openat2, if this kernel answers it; else None."""
    if _OPENAT2 is None or not hasattr(os, "O_DIRECTORY"):
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    how = _OpenHow(_DIR, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)
    fd = _call(syscall, -100, b".", how)  # AT_FDCWD
    if fd < 0:
        return None
    os.close(fd)
    return syscall


def _call(syscall: Callable[..., int], dir_fd: int, rel: bytes, how: _OpenHow) -> int:
    """openat2(dir_fd, rel, how), every argument passed at its full width (variadic)."""
    assert _OPENAT2 is not None
    size = ctypes.c_size_t(ctypes.sizeof(how))
    return int(syscall(ctypes.c_long(_OPENAT2), ctypes.c_long(dir_fd), ctypes.c_char_p(rel),
                       ctypes.byref(how), size))  # fmt: skip


_syscall = _probe_openat2()


def has_openat2() -> bool:
    return _syscall is not None


def use_openat2(on: bool) -> None:
    """Tests run both ways: the kernel's openat2 and the component-by-component walk."""
    global _syscall
    _syscall = _probe_openat2() if on else None


def parts_of(rel: str) -> list[str]:
    """The components of a relative path; "" or "." is the root itself. Raises Unsafe for
    an absolute path or a `..` (the caller resolved those before checking)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if rel.startswith("/") or ".." in parts:
        raise Unsafe(errno.EPERM, "a path must stay beneath its root")
    return parts


def open_root(path: Path) -> int:
    """A directory the caller has resolved and checked (a workspace, a context path)."""
    return os.open(path, _DIR)


def open_beneath(dir_fd: int, rel: str, flags: int, mode: int = 0) -> int:
    """`rel` opened beneath `dir_fd`, refusing a symlink at every component (ELOOP)."""
    parts = parts_of(rel)
    if not parts:
        return os.open(".", flags | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    if _syscall is not None:
        return _openat2(dir_fd, "/".join(parts), flags, mode)
    parent = _walk_to(dir_fd, parts[:-1])
    try:
        return _open_at(parent, parts[-1], flags, mode)
    finally:
        os.close(parent)


def _open_at(dir_fd: int, name: str, flags: int, mode: int = 0) -> int:
    """One component, not followed; a link opened as a directory fails ELOOP (as with
    openat2), not ENOTDIR, so that the caller can say that a link was refused."""
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=dir_fd)
    except NotADirectoryError:
        if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP)) from None
        raise


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int:
    assert _syscall is not None
    how = _OpenHow(flags | _NOFOLLOW | _CLOEXEC, mode if flags & os.O_CREAT else 0,
                   _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)  # fmt: skip
    fd = _call(_syscall, dir_fd, os.fsencode(rel), how)
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return fd


def _walk_to(dir_fd: int, parts: list[str], create: bool = False) -> int:
    """A new descriptor of the directory `parts` beneath `dir_fd`, one component at a
    time with O_NOFOLLOW; with `create`, missing directories are made on the way."""
    fd = os.dup(dir_fd)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            child = _open_at(fd, part, _DIR)
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_parent(dir_fd: int, rel: str, create: bool = False) -> tuple[int, str]:
    """The opened directory that holds `rel` (made on the way with `create`), and its name."""
    parts = parts_of(rel)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "that is the root itself")
    if create:
        return _walk_to(dir_fd, parts[:-1], create=True), parts[-1]
    return open_beneath(dir_fd, "/".join(parts[:-1]), _DIR), parts[-1]


def check_regular(fd: int) -> os.stat_result:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise Unsafe(errno.EINVAL, "not a regular file (a FIFO, device or socket); not read")
    return st


def open_regular(dir_fd: int | None, rel: str | Path) -> int:
    """A regular file opened for reading, by `rel` beneath `dir_fd`, or (no `dir_fd`) by
    a path the caller trusts up to its last component, which is not followed."""
    fd = os.open(rel, _READ) if dir_fd is None else open_beneath(dir_fd, str(rel), _READ)
    try:
        check_regular(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_dir_beneath(root: Path, rel: str) -> int:
    """The directory `rel` beneath the directory `root` (resolved by the caller)."""
    top = open_root(root)
    try:
        return open_beneath(top, rel, _DIR)
    finally:
        os.close(top)


def read_head(dir_fd: int, name: str, limit: int) -> bytes:
    """At most the first `limit` bytes of the regular file `name` in `dir_fd`."""
    fd = os.open(name, _READ, dir_fd=dir_fd)
    try:
        check_regular(fd)
        return os.read(fd, limit)
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int) -> bytes:
    """The bytes of an open file, if it is a regular file of at most `limit` bytes."""
    st = check_regular(fd)
    if st.st_size > limit:
        raise Unsafe(errno.EFBIG, f"the file is {st.st_size:,} bytes, over the {limit:,} limit")
    chunks, left = [], limit + 1
    while left > 0 and (chunk := os.read(fd, min(left, _READ_CHUNK))):
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:  # it grew past the limit while being read
        raise Unsafe(errno.EFBIG, f"the file grew over the {limit:,} byte limit")
    return b"".join(chunks)


def read_beneath(dir_fd: int | None, rel: str | Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (`open_regular`'s names)."""
    fd = open_regular(dir_fd, rel)
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def lstat_beneath(dir_fd: int, rel: str) -> os.stat_result:
    parent, name = open_parent(dir_fd, rel)
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    finally:
        os.close(parent)


def write_atomic(dir_fd: int, rel: str, data: bytes, mode: int | None = None) -> None:
    """`data` into `rel` beneath `dir_fd`: a temp file in the opened parent, renamed there.
    `mode`: the new file's permission bits (default: the old file's, else 0o644)."""
    with atomic_file(dir_fd, rel, mode) as out:
        out.write(data)


@contextlib.contextmanager
def atomic_file(dir_fd: int, rel: str, mode: int | None = None) -> Iterator[BinaryIO]:
    """A new file to write, which replaces `rel` beneath `dir_fd` when the block ends
    without an error: created in the opened parent (made on the way), renamed there."""
    parent, name = open_parent(dir_fd, rel, create=True)
    tmp = f".tmp-{secrets.token_hex(6)}"
    try:
        mode = _mode_of(parent, name) if mode is None else mode
        fd = os.open(tmp, _CREATE, 0o600, dir_fd=parent)
        with os.fdopen(fd, "wb") as out:
            yield out
            os.fchmod(out.fileno(), (mode & 0o777) | 0o200)
        os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=parent)
        os.close(parent)


def _mode_of(parent: int, name: str) -> int:
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return 0o644
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "that is a directory")
    return st.st_mode & 0o777 if stat.S_ISREG(st.st_mode) else 0o644


def unlink_file(dir_fd: int, rel: str) -> None:
    """Remove one regular file (never a directory; a link would be removed, not followed)."""
    parent, name = open_parent(dir_fd, rel)
    try:
        if not stat.S_ISREG(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise Unsafe(errno.EINVAL, "not a regular file")
        os.unlink(name, dir_fd=parent)
    finally:
        os.close(parent)


@dataclass(frozen=True, slots=True)
class Found:
    """One entry of a walk. `dir_fd` is its open parent, valid until the walk moves on."""

    rel: str  # beneath the walk's top, `/`-separated
    name: str
    stat: os.stat_result  # of the entry itself (a symlink is not followed)
    dir_fd: int

    def read(self, limit: int) -> bytes:
        fd = os.open(self.name, _READ, dir_fd=self.dir_fd)
        try:
            return read_fd(fd, limit)
        finally:
            os.close(fd)


class Walk:
    """Every non-directory entry beneath a directory descriptor, sorted, directories'
    own files before their subdirectories (as `os.walk` top-down); symlinks are listed,
    never entered. `skip(rel, is_dir)` leaves an entry out (a directory unentered).
    At most `limit` entries are looked at, `MAX_WALK_DEPTH` directories deep;
    `truncated` says whether the walk stopped short."""

    def __init__(
        self,
        dir_fd: int,
        skip: Callable[[str, bool], bool] | None = None,
        limit: int = MAX_WALK_ENTRIES,
    ) -> None:
        self._top, self._skip, self._left = dir_fd, skip or (lambda rel, d: False), limit
        self.truncated = False

    def __iter__(self) -> Iterator[Found]:
        return self._dir(os.dup(self._top), "")

    def _dir(self, fd: int, prefix: str) -> Iterator[Found]:
        try:
            entries = self._entries(fd)
            subdirs = []
            for name, st in entries:
                rel = prefix + name
                is_dir = stat.S_ISDIR(st.st_mode)
                if self._skip(rel, is_dir):
                    continue
                if is_dir:
                    subdirs.append(name)
                else:
                    yield Found(rel, name, st, fd)
            if subdirs and prefix.count("/") >= MAX_WALK_DEPTH:
                self.truncated = True
                return
            for name in subdirs:
                try:
                    child = os.open(name, _DIR, dir_fd=fd)
                except OSError:  # swapped for a link, or removed, since it was listed
                    continue
                yield from self._dir(child, f"{prefix}{name}/")
        finally:
            os.close(fd)

    def _entries(self, fd: int) -> list[tuple[str, os.stat_result]]:
        found = []
        with os.scandir(fd) as listing:
            for entry in listing:
                if self._left <= 0:
                    self.truncated = True
                    break
                self._left -= 1
                try:
                    found.append((entry.name, entry.stat(follow_symlinks=False)))
                except OSError:
                    continue
        return sorted(found, key=lambda e: e[0])
