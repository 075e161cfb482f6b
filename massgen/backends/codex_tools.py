"""What Codex's own tool calls do, where its CLI is, and the sandbox it is held to.

Codex runs its commands and file changes in its own process; with the approval policy
`untrusted` it asks its client (massgen, `codex.py`) before each one, and massgen asks its
permission engine. A call whose effects cannot be told raises `Unjudgeable`, which the
engine records as a refusal.

What Codex runs once allowed runs in Codex's own sandbox (bubblewrap on Linux), held to a
permission profile massgen writes (`permission_profile`): write only in the workspace,
read only the system's minimal set, the workspace, the context paths and Codex itself, no
network. The profile denies reading Codex's credentials file; by Codex's source a profile
with a denied read is one it never leaves (`unsandboxed_execution_allowed`): it does not
retry a sandbox-denied command without the sandbox, as its orchestrator otherwise may
after an approval (seen here with the legacy `workspace-write` sandbox).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from massgen.core.effects import Delete, Effect, Run, Write

PIN = "0.171.0"  # the Codex CLI release the tests drive (`.ci/run` installs it)
# PyPI's build of the Codex CLI (`massgen[codex]`, pinned in pyproject.toml): its latest
# release lags npm's, and the tests pass against it too (`.ci/run` installs both).
WHEEL_PIN = "0.163.0"
INSTALL = f"pip install 'massgen[codex]' (Codex {WHEEL_PIN}) or npm install -g @openai/codex@{PIN}"
PATH_ENV = "MASSGEN_CODEX_PATH"
COMMAND = "exec_command"  # the names its calls get in massgen's events and ledger
PATCH = "apply_patch"
_SHELLS = frozenset({"bash", "sh", "zsh"})


class Unjudgeable(ValueError):
    """The call's effects cannot be told, so it may not run."""


def effects(name: str, arguments: Mapping[str, Any], cwd: Path) -> tuple[Effect, ...]:
    """The effects of one Codex call, as `codex.py` describes it: a command (`command`,
    `cwd`) or a file change (`changes`: `{path, kind}` each).

    Raises:
        Unjudgeable: a call of another kind, or one without what it needs.
    """
    if name == COMMAND:
        return (_run(arguments.get("command"), arguments.get("cwd"), cwd),)
    if name == PATCH:
        changes = arguments.get("changes")
        if not isinstance(changes, list) or not changes:
            raise Unjudgeable("the file change names no files")
        return tuple(_change(change, cwd) for change in changes)
    raise Unjudgeable(f"massgen cannot tell what Codex's `{name}` does")


def _run(command: Any, where: Any, cwd: Path) -> Run:
    if not isinstance(command, str) or not command.strip():
        raise Unjudgeable("the command is empty")
    run_in = Path(where) if isinstance(where, str) and where else cwd
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise Unjudgeable(f"the command cannot be read ({error})") from None
    # Codex wraps the model's script as `/bin/bash -lc '<script>'`: the engine reads the
    # script as the shell would.
    if len(argv) == 3 and Path(argv[0]).name in _SHELLS and argv[1] in ("-c", "-lc"):
        return Run(("/bin/sh", "-c", argv[2]), run_in)
    return Run(tuple(argv), run_in)


def _change(change: Any, cwd: Path) -> Effect:
    path = change.get("path") if isinstance(change, dict) else None
    if not isinstance(path, str) or not path:
        raise Unjudgeable("a file change names no path")
    target = Path(path) if os.path.isabs(path) else cwd / path
    kind = change.get("kind")
    kind = kind.get("type") if isinstance(kind, dict) else kind
    return Delete(target) if kind == "delete" else Write(target)


def find_cli(configured: str | None, environ: Mapping[str, str]) -> Path | None:
    """The Codex CLI: the config's `codex_path`, else `$MASSGEN_CODEX_PATH`, else `codex`
    on PATH, else the one `massgen[codex]` installed beside massgen, else a project-local
    npm install under massgen's cache (`~/.cache/massgen/codex/node_modules/.bin/codex`)."""
    for given in (configured, environ.get(PATH_ENV)):
        if given:
            path = Path(given).expanduser()
            return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which("codex", path=environ.get("PATH"))
    if found:
        return Path(found)
    return wheel_cli() or npm_cache_cli(environ)


def npm_cache_cli(environ: Mapping[str, str]) -> Path | None:
    """The npm install under massgen's cache. Its launcher is a node script: without
    `node` on PATH it could not start, so it does not count as found."""
    local = cache_dir(environ) / "codex" / "node_modules" / ".bin" / "codex"
    if not local.is_file() or shutil.which("node", path=environ.get("PATH")) is None:
        return None
    return local


def wheel_cli() -> Path | None:
    """The Codex CLI of `massgen[codex]` (PyPI's `openai-codex-cli-bin`), if installed."""
    try:
        from codex_cli_bin import bundled_codex_path
    except ImportError:
        return None
    try:
        path = Path(bundled_codex_path())
    except FileNotFoundError:  # the package without its binary: a broken install
        return None
    return path if os.access(path, os.X_OK) else None


def cache_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")) / ".cache")
    return Path(base).expanduser() / "massgen"


def package_root(cli: Path) -> Path:
    """What Codex's sandbox must be able to read to start its helper: the npm tree the
    launcher belongs to (the native binary lives beside it), or the PyPI package's folder
    (its `codex-package.json` beside `bin/`, its bundled tools), else the CLI's folder."""
    real = cli.resolve()
    for parent in real.parents:
        if parent.name == "node_modules" or (parent / "codex-package.json").is_file():
            return parent
    return real.parent


PROFILE = "massgen"


def permission_profile(
    workspace: Path, readable: tuple[Path, ...], cli: Path, codex_home: Path, network: bool
) -> dict[str, Any]:
    """The thread's `config`: Codex's sandbox held to the member's workspace."""
    filesystem: dict[str, str] = {":minimal": "read"}
    filesystem |= {str(p): "read" for p in (package_root(cli), *readable)}
    filesystem[str(workspace)] = "write"
    filesystem[str(codex_home / "auth.json")] = "deny"
    profile = {"filesystem": filesystem, "network": {"enabled": network}}
    return {"default_permissions": PROFILE, "permissions": {PROFILE: profile}}
