"""The OS sandbox around `execute_command`: what a command may read, write and reach.

    sandbox = select_sandbox("auto", network=False)    # -> Sandbox | NoSandbox
    wrapped = sandbox.wrap(argv, Confinement(workspace, tmp, readable=context_paths))
    run_command(wrapped.argv, workspace, limits, {**env, **wrapped.env})

A confined command
- writes only its workspace and a private tmp dir (`TMPDIR` and `HOME` point there);
- reads the system (`/usr`, `/bin`, `/lib*`, `/etc`, `/opt`, the Python install), its
  workspace, and the extra read-only paths (context paths) — never the hidden ones (the
  user's `~/.ssh`, `~/.config/massgen`, the project's `.env`, `/etc/shadow`, a
  context path's `.env` or `*.pem`: `core/secrets.py`), even
  inside a readable path; the rest of the machine (the home directory, other agents'
  workspaces, the snapshot store) is not there at all;
- has no network unless `network` is set.

Nothing a command starts outlives the call, and each call is bounded: every kind runs the
command in a pid namespace of its own, so when the command ends or is killed the kernel
ends every process it left, also after `setsid` or a double fork; and each call has a
process-count limit (RLIMIT_NPROC, counted inside the call's own user namespace where it
has one; root is exempt) and a memory limit (RLIMIT_AS), `Confinement.max_processes` and
`max_memory_bytes` (`command_line_max_processes`, `command_line_max_memory_mb`).

Two mechanisms, the first that works wins under `auto`:
- bubblewrap (`bwrap`): mount, pid, ipc and net namespaces. The command sees a new root
  holding only what it may read; `--unshare-pid` and `--die-with-parent` mean that killing
  the runner's process group (timeout, cancellation) takes every process of the sandbox
  with it. The limits are set inside by util-linux `prlimit`.
- Landlock (Linux >= 5.13), without root: the launcher (`permissions/launcher.py`) makes
  the pid namespace (inside a user namespace when it must), forks the command, which sets
  its limits, restricts itself (`permissions/landlock.py`) and execs; the launcher stays
  outside as its parent. TCP is blocked with Landlock ABI >= 4 (older
  kernels: refused unless `network` is set); on x86_64 and arm64 a seccomp filter also
  refuses inet sockets without network (UDP), unix sockets always (ssh-agent, docker) and
  io_uring. No /proc (so neither `/dev/stdout` by name), and a directory holding a hidden
  path cannot be listed.
- `none` confines neither files nor network, but gives the command the same pid
  namespace and limits: util-linux `unshare --pid --fork --kill-child` (with
  `--map-current-user` where it must) and `prlimit`, else the launcher without Landlock.

Where neither works, `select_sandbox` returns a `NoSandbox` whose `reason` says how to
fix it; the command tool then refuses every command. Running unsandboxed takes an explicit
`command_line_sandbox: none`, which warns in every view and, in a run nobody watches
(`--automation`, serve, batch), also `command_line_sandbox_acknowledge_unconfined: true`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from massgen.core.secrets import hidden_paths, secrets_within

SandboxMode = Literal["auto", "bubblewrap", "landlock", "none"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "bubblewrap", "landlock", "none")

# What every command may read: the system, and the interpreter massgen runs on (so
# `python` in the scrubbed PATH works inside).
SYSTEM_READABLE: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
)
# Where /etc/resolv.conf often points: read only when the network is on.
NETWORK_READABLE: tuple[str, ...] = ("/run/systemd/resolve", "/run/resolvconf")
# Hidden whatever else is readable: `secrets.hidden_paths` (the user's credentials under
# HOME, the project's `.env` and `.massgen`, the system's), and every secret file found
# in a readable path (a context path's `.env`, `server.pem`, ...).
SECRETS_TTL_SECONDS = 60.0  # how long the secrets found in a readable tree are reused
_found: dict[Path, tuple[float, tuple[Path, ...]]] = {}
# A command's /tmp (bubblewrap) and, in both sandboxes, its TMPDIR and HOME.
SANDBOX_TMP = "/tmp"
# The bounds of one call (`command_line_max_processes`, `command_line_max_memory_mb`).
DEFAULT_MAX_PROCESSES = 512
DEFAULT_MAX_MEMORY_MB = 8192
PROBE_TIMEOUT_SECONDS = 5.0

HOW_TO_FIX = (
    "install bubblewrap (`apt-get install bubblewrap`), run on a Linux kernel with Landlock, "
    "or set `command_line_sandbox: none` on the agent's backend to run commands unsandboxed "
    "(at your own risk)"
)


@dataclass(frozen=True, slots=True)
class Confinement:
    """Where one command may write (`workspace`, `tmp`) and read (those, the system and
    `readable`), what stays hidden, whether it may use the network, and how many processes
    and bytes of address space (per process) it may have; 0: no limit."""

    workspace: Path
    tmp: Path
    readable: tuple[Path, ...] = ()
    network: bool = False
    hidden: tuple[Path, ...] = field(default_factory=lambda: default_hidden())
    max_processes: int = DEFAULT_MAX_PROCESSES
    max_memory_bytes: int = DEFAULT_MAX_MEMORY_MB * 1024 * 1024
    # Where the command starts (the runner's `cwd` too); None: the workspace. A verifier
    # starts in a read-only copy of the answer's files (`massgen/verifiers/`).
    cwd: Path | None = None


@dataclass(frozen=True, slots=True)
class Wrapped:
    """The argv to run, and the variables to set on top of the (scrubbed) environment."""

    argv: tuple[str, ...]
    env: dict[str, str]


class Sandbox(Protocol):
    @property
    def name(self) -> str:
        """ "bubblewrap", "landlock" or "none": for logs and the engine."""
        ...

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> Wrapped: ...


@dataclass(frozen=True, slots=True)
class NoSandbox:
    """No sandbox could be had: every command is refused with `reason`."""

    reason: str
    name: str = "unavailable"


def default_hidden(home: Path | None = None, project: Path | None = None) -> tuple[Path, ...]:
    return hidden_paths(home or Path.home(), project or Path.cwd())


def hidden_of(c: Confinement) -> tuple[Path, ...]:
    """`c.hidden` and the secrets inside its readable paths (a bounded walk, reused for
    `SECRETS_TTL_SECONDS`: a command's start must not walk a large tree each time)."""
    now = time.monotonic()
    found: list[Path] = []
    for root in c.readable:
        real = _real(root)
        cached = _found.get(real)
        if cached is None or now - cached[0] > SECRETS_TTL_SECONDS:
            cached = (now, tuple(secrets_within(real)) if real.is_dir() else ())
            if len(_found) >= 64:  # bounded: a long `serve` sees many context paths
                _found.clear()
            _found[real] = cached
        found += cached[1]
    return (*c.hidden, *found)


def select_sandbox(
    mode: SandboxMode,
    *,
    network: bool = False,
    search_path: str | None = None,
    landlock_abi: int | None = None,
) -> Sandbox | NoSandbox:
    """The sandbox `mode` asks for, or why there is none.

    `search_path`: where to look for `bwrap` (default: this process's PATH).
    `landlock_abi`: the kernel's Landlock ABI (default: asked of the kernel; 0: none).
    """
    if mode == "none":
        return Unconfined(*_pid_namespace_tools(search_path))
    errors: list[str] = []
    if mode in ("auto", "bubblewrap"):
        found = _bubblewrap(search_path)
        if isinstance(found, Bubblewrap):
            return found
        errors.append(found)
    if mode in ("auto", "landlock"):
        from massgen.permissions import landlock

        abi = landlock.abi_version() if landlock_abi is None else landlock_abi
        if abi < 1:
            errors.append("the kernel has no Landlock (Linux 5.13 or later, enabled)")
        elif not network and abi < landlock.NET_ABI:
            errors.append(
                f"the kernel's Landlock (ABI {abi}) cannot block the network (ABI 4, "
                "Linux 6.7); set `command_line_network: true` or install bubblewrap"
            )
        else:
            return Landlocked(abi)
    return NoSandbox(f"commands are refused: no sandbox ({'; '.join(errors)}); {HOW_TO_FIX}.")


def _bubblewrap(search_path: str | None) -> Bubblewrap | str:
    path = shutil.which("bwrap", path=search_path)
    if path is None:
        return "`bwrap` is not on PATH"
    prlimit = shutil.which("prlimit", path=search_path)
    if prlimit is None:
        return "`prlimit` (util-linux), which sets each command's limits, is not on PATH"
    failure = _probe(path)
    if failure:
        return f"`{path}` does not work here ({failure})"
    return Bubblewrap(path, prlimit)


def _pid_namespace_tools(search_path: str | None) -> tuple[tuple[str, ...], str]:
    """The util-linux `unshare` argv that gives a command its own pid namespace here, and
    `prlimit`; ((), "") where they are missing or not allowed (the launcher then)."""
    unshare = shutil.which("unshare", path=search_path)
    prlimit = shutil.which("prlimit", path=search_path)
    if unshare is None or prlimit is None:
        return (), ""
    return _unshare_argv(unshare), prlimit


@functools.cache
def _unshare_argv(unshare: str) -> tuple[str, ...]:
    base = (unshare, "--pid", "--fork", "--kill-child")
    # Without the right to make a pid namespace, make it in a user namespace of our own.
    for argv in (base, (*base, "--map-current-user")):
        try:
            done = subprocess.run(
                [*argv, "true"], capture_output=True, timeout=PROBE_TIMEOUT_SECONDS
            )
        except (OSError, subprocess.TimeoutExpired):
            return ()
        if done.returncode == 0:
            return argv
    return ()


@functools.cache
def _probe(bwrap: str) -> str:
    """'' when `bwrap` can make the namespaces we use, else why not (once per process)."""
    argv = [bwrap, *_NAMESPACES, "--unshare-net", "--ro-bind", "/", "/", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit {done.returncode}"
    return ""


# ---------------------------------------------------------------- the sandboxes


@dataclass(frozen=True, slots=True)
class Unconfined:
    """`command_line_sandbox: none`: the command runs with the user's rights over files and
    the network, but in its own pid namespace and within the limits (the launcher)."""

    unshare: tuple[str, ...] = ()  # util-linux `unshare --pid ...`; () : the launcher
    prlimit: str = ""
    name: str = "none"

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> Wrapped:
        tmp = str(_real(confinement.tmp))
        env = {"TMPDIR": tmp, "HOME": tmp}
        if not self.unshare:  # a Python start per call (~20 ms), where util-linux fails
            return Wrapped(_launcher(None, confinement, argv), env)
        limits = _prlimit(self.prlimit, confinement)
        return Wrapped((*self.unshare, *limits, *argv), env)


def _prlimit(prlimit: str, c: Confinement) -> tuple[str, ...]:
    """`prlimit` with the call's limits, then `--`: run inside the pid (and user) namespace,
    so that RLIMIT_NPROC counts this call's processes there."""
    nproc, memory = c.max_processes or "unlimited", c.max_memory_bytes or "unlimited"
    return (prlimit, f"--nproc={nproc}", f"--as={memory}", "--")


_NAMESPACES = (
    "--die-with-parent",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
)


@dataclass(frozen=True, slots=True)
class Bubblewrap:
    bwrap: str
    prlimit: str = "/usr/bin/prlimit"
    name: str = "bubblewrap"

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> Wrapped:
        c = confinement
        limits = _prlimit(self.prlimit, c)  # inside, after bwrap made its namespaces
        return Wrapped(
            (self.bwrap, *bwrap_arguments(c), "--", *limits, *argv),
            {"TMPDIR": SANDBOX_TMP, "HOME": SANDBOX_TMP},
        )


def bwrap_arguments(c: Confinement) -> list[str]:
    """The mounts, in an order where a later mount may sit inside an earlier one: the
    system, the private /tmp, the readable paths, the masks over hidden paths, the
    workspace, then the masks and the root made read-only."""
    args = list(_NAMESPACES)
    if not c.network:
        args.append("--unshare-net")
    for name in SYSTEM_READABLE:
        args += _system_mount(Path(name))
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--bind", str(_real(c.tmp)), SANDBOX_TMP]
    readable = [*_interpreter_paths(), *_network_paths(c), *c.readable]
    for path in sorted({_real(p) for p in readable}, key=lambda p: len(p.parts)):
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    visible = [Path(n) for n in SYSTEM_READABLE] + [_real(p) for p in readable]
    masked = _hidden_within(hidden_of(c), visible)
    for hidden in masked:
        args += (
            ["--tmpfs", str(hidden)] if hidden.is_dir() else ["--ro-bind", "/dev/null", str(hidden)]
        )
    workspace = str(_real(c.workspace))
    args += ["--bind", workspace, workspace]
    # Made read-only only now: the workspace may lie inside a masked directory (`.massgen`).
    for hidden in masked:
        if hidden.is_dir():
            args += ["--remount-ro", str(hidden)]
    start = str(_real(c.cwd)) if c.cwd is not None else workspace
    args += ["--remount-ro", "/", "--chdir", start]
    return args


def _system_mount(path: Path) -> list[str]:
    if path.is_symlink():  # merged /usr: /bin -> usr/bin
        return ["--symlink", os.readlink(path), str(path)]
    if path.is_dir():
        return ["--ro-bind", str(path), str(path)]
    return []


@dataclass(frozen=True, slots=True)
class Landlocked:
    abi: int
    name: str = "landlock"

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> Wrapped:
        c = confinement
        readable = [*SYSTEM_READABLE, *_interpreter_paths(), *_network_paths(c), *c.readable]
        rules = {
            "read": [str(p) for p in readable],
            "write": [str(_real(c.workspace)), str(_real(c.tmp))],
            "hidden": [str(_real(p)) for p in hidden_of(c)],
            "network": c.network,
        }
        tmp = str(_real(c.tmp))
        return Wrapped(_launcher(rules, c, argv), {"TMPDIR": tmp, "HOME": tmp})


def _launcher(
    rules: dict[str, object] | None, c: Confinement, argv: Sequence[str]
) -> tuple[str, ...]:
    """`argv` run by the launcher: its own pid namespace, the limits, and Landlock when
    `rules` are given. `-I -S`: no site, no user paths; it needs only the standard library."""
    from massgen.permissions import launcher

    policy = {"landlock": rules, "processes": c.max_processes, "memory": c.max_memory_bytes}
    return (sys.executable, "-I", "-S", launcher.__file__, json.dumps(policy), "--", *argv)


# ---------------------------------------------------------------- paths


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _interpreter_paths() -> list[Path]:
    return [Path(p) for p in {sys.prefix, sys.base_prefix}]


def _network_paths(c: Confinement) -> list[Path]:
    return [Path(p) for p in NETWORK_READABLE] if c.network else []


def _hidden_within(hidden: Iterable[Path], visible: Iterable[Path]) -> list[Path]:
    """The hidden paths that exist and lie inside something visible (the rest need no
    mask: the sandbox does not show them)."""
    roots = [_real(p) for p in visible]
    found = []
    for path in hidden:
        real = _real(path)
        if real.exists() and any(real.is_relative_to(root) for root in roots):
            found.append(real)
    return sorted(set(found), key=lambda p: len(p.parts))
