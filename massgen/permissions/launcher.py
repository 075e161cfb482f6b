"""The command launcher: a pid namespace, limits, optionally Landlock, then exec.

    python -I -S launcher.py '{"landlock": {...} | null, "processes": 512,
                               "memory": 8589934592}' -- /bin/sh -c 'make test'

Run as a script by `permissions/sandbox.py` (`Landlocked`, `Unconfined`), so it imports
nothing but the standard library (and `landlock.py` beside it, by path, when asked).

Nothing a command starts outlives it, whatever `setsid` or double forks it uses: the
launcher puts the command in a pid namespace of its own (`unshare(CLONE_NEWPID)`; a user
without the right to do so gets it inside a user namespace that maps only its own uid and
gid). The command is that namespace's first process, so when it ends, or is killed, the
kernel kills every process left in the namespace. The launcher stays outside as its parent
(a child subreaper); where no namespace can be had it falls back to stopping and killing
the command's descendants itself (`_kill_descendants`).

Limits, set in the command's process before it execs:
- `memory`: RLIMIT_AS in bytes (each process's address space);
- `processes`: RLIMIT_NPROC. The kernel counts it per user and user namespace, so it bounds
  the call only inside a user namespace of its own; elsewhere the launcher adds the user's
  processes already running. Root is exempt from it (the kernel's rule); the namespace
  still ends everything when the call ends.
Any failure before the exec exits 126: no command runs with fewer rules than asked.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import resource
import select
import signal
import sys
import types

_CLONE_NEWUSER, _CLONE_NEWPID = 0x10000000, 0x20000000
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_KILL_ROUNDS = 1000


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: launcher.py POLICY_JSON -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    try:
        policy = json.loads(argv[0])
        if not isinstance(policy, dict):
            raise ValueError("the policy must be a JSON object")
        _check(_libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "subreaper")
        namespace = new_pid_namespace()
    except (OSError, ValueError) as error:
        print(f"massgen sandbox: {error}; the command was not run", file=sys.stderr)
        return 126
    alive, keep = os.pipe()  # the child sees EOF on `alive` once the launcher is gone
    child = os.fork()
    if child == 0:
        os.close(keep)
        _run_child(policy, argv[2:], alive, namespace)
    os.close(alive)
    return _supervise(child, namespace)


def new_pid_namespace() -> str:
    """Make the next child the first process of a new pid namespace: "pid" (this process
    may), "user" (inside a new user namespace), or "" (neither is allowed here)."""
    libc = _libc()
    if libc.unshare(_CLONE_NEWPID) == 0:
        return "pid"
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWPID) != 0:
        return ""
    # Map only ourselves, so files keep their owner; setgroups must be denied first.
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"),
                       ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    return "user"


def _run_child(policy: dict[str, object], command: list[str], alive: int, ns: str) -> None:
    """In the child: die with the launcher, set the limits, confine, exec; never returns."""
    try:
        _check(_libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
        if select.select([alive], [], [], 0)[0]:
            os._exit(126)  # the launcher died before the death signal was armed
        os.close(alive)
        set_limits(policy, ns)
        rules = policy.get("landlock")
        if rules is not None:
            if not isinstance(rules, dict):
                raise ValueError("`landlock` must be an object")
            _landlock().confine(rules)
    except (OSError, ValueError) as error:
        print(f"massgen sandbox: {error}; the command was not run", file=sys.stderr)
        os._exit(126)
    try:
        os.execvp(command[0], command)
    except OSError as error:
        print(f"massgen sandbox: cannot run {command[0]}: {error}", file=sys.stderr)
    os._exit(127)


def set_limits(policy: dict[str, object], ns: str) -> None:
    """RLIMIT_AS and RLIMIT_NPROC from `policy` (absent or 0: no limit)."""
    memory = _count(policy, "memory")
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    processes = _count(policy, "processes")
    if processes and os.geteuid() != 0:
        if ns != "user":  # counted over all of this user's processes
            processes += _processes_of(os.getuid())
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


def _count(policy: dict[str, object], key: str) -> int:
    value = policy.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"`{key}` must be a non-negative integer")
    return value


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += 1
    return count


def _landlock() -> types.ModuleType:
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("massgen_landlock", f"{here}/landlock.py")
    if spec is None or spec.loader is None:
        raise OSError("landlock.py is missing beside the launcher")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- no orphans


def _supervise(child: int, namespace: str) -> int:
    """Wait for the command; end what it left; exit the way it did (a signal that ended
    it ends the launcher too, so the runner reports it)."""

    def stop(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)  # in a namespace: the kernel ends the rest
        _kill_descendants()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    while True:
        pid, status = os.wait()
        if pid == child:
            break
    if not namespace:  # with one, the kernel has ended every process in it already
        _kill_descendants()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code  # a signal whose default is not to end the process
    return code


def _kill_descendants() -> None:
    """Stop every descendant (a stopped process cannot fork), until no new one appears,
    then kill them all and reap."""
    stopped: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        found = set(_descendants(os.getpid())) - stopped
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        stopped |= found
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
