"""Landlock, through ctypes: restrict this process (and what it execs) to a policy.

    confine({"read": [...], "write": [...], "hidden": [...], "network": False})

Loaded by path by the command launcher (`permissions/launcher.py`), in the command's
process just before it execs, so it imports nothing but the standard library.

Landlock grants by directory: a right given on a directory holds for
everything beneath it. A hidden path inside a granted directory is therefore left out by
granting the directory's other entries one by one instead of the directory itself (its
own listing is then not readable). Any failure raises, and the launcher then exits 126
before the command runs: no command runs with fewer rules than asked.

A seccomp filter then refuses the sockets Landlock cannot see (`filter_sockets`).

Kernel ABI (`abi_version()`): 1 files (5.13), 2 rename across directories (5.19), 3
truncate (6.2), 4 TCP bind/connect (6.7), 5 device ioctl (6.10), 6 signal and abstract
unix socket scoping (6.12).
"""

from __future__ import annotations

import ctypes
import os
import sys

NET_ABI = 4
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # x86_64, arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
_READ = EXECUTE | READ_FILE | READ_DIR
# Devices a shell writes to (`> /dev/null`) and reads from.
_DEVICES_RW = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
_DEVICES_R = ("/dev/urandom", "/dev/random")
# No /proc: Landlock's ptrace scoping does not stop a read of another process's
# /proc/<pid>/environ on every kernel (seen on 6.18), and that is where massgen's keys are.
# /dev/stdout and friends still work: their targets are pipes, not paths.
_MAX_EXPANDED = 10_000  # entries granted one by one around hidden paths


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when it has none (or it is disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def fs_rights(abi: int) -> int:
    """Every file-system right this ABI knows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _file_only(rights: int) -> int:
    """The rights a rule on a file (not a directory) may hold."""
    return rights & (EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV)


class _Rules:
    def __init__(self, abi: int, network: bool) -> None:
        self.libc = _libc()
        self.abi = abi
        self.all_fs = fs_rights(abi)
        attr = _RulesetAttr(self.all_fs, 0, 0)
        size = 8
        if abi >= NET_ABI and not network:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
            size = 16
        if abi >= 6:
            attr.scoped = SCOPE_SIGNAL | (0 if network else SCOPE_ABSTRACT_UNIX_SOCKET)
            size = 24
        self.fd = self._check(
            self.libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0), "create"
        )
        self.granted = 0

    def _check(self, result: int, what: str) -> int:
        if result < 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"landlock {what}: {os.strerror(errno)}")
        return result

    def grant(self, path: str, rights: int, hidden: tuple[str, ...]) -> None:
        """`rights` beneath `path`, except beneath the hidden paths."""
        if path in hidden or not os.path.lexists(path):
            return
        inside = [h for h in hidden if h.startswith(path.rstrip("/") + "/")]
        is_dir = os.path.isdir(path) and not os.path.islink(path)
        if not inside or not is_dir:
            self._add(path, rights if is_dir else _file_only(rights))
            return
        for name in sorted(os.listdir(path)):
            entry = os.path.join(path, name)
            if not os.path.islink(entry):  # a link's target is granted on its own, or not
                self.grant(entry, rights, tuple(inside))

    def _add(self, path: str, rights: int) -> None:
        self.granted += 1
        if self.granted > _MAX_EXPANDED:
            raise OSError(f"landlock: more than {_MAX_EXPANDED} rules around hidden paths")
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # gone, or unreadable anyway
        try:
            attr = _PathBeneathAttr(rights & self.all_fs, fd)
            rule = self.libc.syscall(
                _SYS_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(attr), 0
            )
            self._check(rule, f"add rule for {path}")
        finally:
            os.close(fd)

    def restrict(self) -> None:
        self._check(self.libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        self._check(self.libc.syscall(_SYS_RESTRICT_SELF, self.fd, 0), "restrict_self")


def confine(policy: dict[str, object]) -> None:
    """Restrict this process (and what it execs) to `policy`.

    Raises:
        OSError: the kernel refused a step; the process must not go on to run anything.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError("landlock: the kernel has no Landlock")
    network = bool(policy.get("network"))
    if not network and abi < NET_ABI:
        raise OSError(f"landlock: ABI {abi} cannot block the network")
    hidden = tuple(os.path.realpath(str(p)) for p in _strings(policy, "hidden"))
    rules = _Rules(abi, network)
    write = rules.all_fs
    for path in _strings(policy, "read"):
        rules.grant(os.path.realpath(path), _READ, hidden)
    for path in _DEVICES_R:
        rules.grant(path, READ_FILE | READ_DIR, ())
    for path in _DEVICES_RW:
        rules.grant(path, READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV, ())
    for path in _strings(policy, "write"):
        rules.grant(os.path.realpath(path), write, ())
    rules.restrict()
    filter_sockets(network)


# ---------------------------------------------------------------- seccomp
#
# Landlock does not see sockets that are not TCP, nor connect() to a socket file: a
# command could reach ssh-agent or the docker socket by path, or send UDP. A seccomp
# filter refuses, with EPERM, socket() for AF_UNIX and AF_PACKET always and for AF_INET
# and AF_INET6 without network; io_uring (which can open sockets around seccomp); and
# any syscall of a foreign ABI (x32, i386), where the numbers differ.

_ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}  # audit arch, socket
_IO_URING_SETUP = 425
_X32_BIT = 0x40000000
AF_UNIX, AF_INET, AF_INET6, AF_PACKET = 1, 2, 10, 17
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_EPERM = 0x7FFF0000, 0x00050000 | 1
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def socket_filter(machine: str, network: bool) -> list[tuple[int, int, int, int]] | None:
    """The BPF program, as (code, jt, jf, k); None on an architecture it does not know."""
    if machine not in _ARCHES:
        return None
    arch, socket_nr = _ARCHES[machine]
    families = [AF_UNIX, AF_PACKET] + ([] if network else [AF_INET, AF_INET6])
    program = [
        (_LD_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, _RET_EPERM),
        (_LD_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JGE, 0, 1, _X32_BIT),
        (_RET, 0, 0, _RET_EPERM),
        (_JEQ, 0, 1, _IO_URING_SETUP),
        (_RET, 0, 0, _RET_EPERM),
        (_JEQ, 1, 0, socket_nr),
        (_RET, 0, 0, _RET_ALLOW),
        (_LD_ABS, 0, 0, 16),  # seccomp_data.args[0], low half: the address family
    ]
    for family in families:
        program += [(_JEQ, 0, 1, family), (_RET, 0, 0, _RET_EPERM)]
    return [*program, (_RET, 0, 0, _RET_ALLOW)]


def filter_sockets(network: bool) -> None:
    """Install `socket_filter` on this process (no_new_privs must be set already)."""
    program = socket_filter(os.uname().machine, network)
    if program is None:
        return  # Landlock alone: TCP is still blocked without network
    filters = (_SockFilter * len(program))(*(_SockFilter(*insn) for insn in program))
    fprog = _SockFprog(len(program), filters)
    libc = _libc()
    result = libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)
    _check(result, "seccomp")


def _strings(policy: dict[str, object], key: str) -> list[str]:
    value = policy.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OSError(f"landlock: `{key}` must be a list of paths")
    return value


def _check(result: int, what: str) -> None:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
