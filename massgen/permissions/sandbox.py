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

Two mechanisms, the first that works wins under `auto`:
- bubblewrap (`bwrap`): mount, pid, ipc and net namespaces. The command sees a new root
  holding only what it may read; `--unshare-pid` and `--die-with-parent` mean that killing
  the runner's process group (timeout, cancellation) takes every process of the sandbox
  with it, also one that called `setsid`.
- Landlock (Linux >= 5.13), without root or namespaces: a small launcher
  (`permissions/landlock.py`) forks a child that restricts itself and execs the command;
  the launcher stays as its subreaper and kills what the command left (also after
  `setsid`) when it ends or is stopped. TCP is blocked with Landlock ABI >= 4 (older
  kernels: refused unless `network` is set); on x86_64 and arm64 a seccomp filter also
  refuses inet sockets without network (UDP), unix sockets always (ssh-agent, docker) and
  io_uring. No /proc (so neither `/dev/stdout` by name), and a directory holding a hidden
  path cannot be listed.

Where neither works, `select_sandbox` returns a `NoSandbox` whose `reason` says how to
fix it; the command tool then refuses every command. Running unsandboxed takes an explicit
`command_line_sandbox: none`, which logs a warning.
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
PROBE_TIMEOUT_SECONDS = 5.0

HOW_TO_FIX = (
    "install bubblewrap (`apt-get install bubblewrap`), run on a Linux kernel with Landlock, "
    "or set `command_line_sandbox: none` on the agent's backend to run commands unsandboxed "
    "(at your own risk)"
)


@dataclass(frozen=True, slots=True)
class Confinement:
    """Where one command may write (`workspace`, `tmp`) and read (those, the system and
    `readable`), what stays hidden, and whether it may use the network."""

    workspace: Path
    tmp: Path
    readable: tuple[Path, ...] = ()
    network: bool = False
    hidden: tuple[Path, ...] = field(default_factory=lambda: default_hidden())


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
        return Unconfined()
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
    failure = _probe(path)
    if failure:
        return f"`{path}` does not work here ({failure})"
    return Bubblewrap(path)


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
    """`command_line_sandbox: none`: the command runs as it is, with the user's rights."""

    name: str = "none"

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> Wrapped:
        return Wrapped(tuple(argv), {"TMPDIR": str(confinement.tmp)})


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
    name: str = "bubblewrap"

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> Wrapped:
        return Wrapped(
            (self.bwrap, *bwrap_arguments(confinement), "--", *argv),
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
    args += ["--remount-ro", "/", "--chdir", workspace]
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
        from massgen.permissions import landlock

        c = confinement
        readable = [*SYSTEM_READABLE, *_interpreter_paths(), *_network_paths(c), *c.readable]
        policy = {
            "read": [str(p) for p in readable],
            "write": [str(_real(c.workspace)), str(_real(c.tmp))],
            "hidden": [str(_real(p)) for p in hidden_of(c)],
            "network": c.network,
        }
        # `-I -S`: no site, no user paths; the launcher needs only ctypes and os.
        launcher = (sys.executable, "-I", "-S", landlock.__file__, json.dumps(policy), "--")
        tmp = str(_real(c.tmp))
        return Wrapped((*launcher, *argv), {"TMPDIR": tmp, "HOME": tmp})


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
