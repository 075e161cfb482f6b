"""What is secret: one definition for the permission engine, the file tools (reads and
walks) and the command sandbox's hidden paths, in every root.

A path is secret by its name anywhere (`.env*` but the examples, keys and certificates,
`id_rsa*`, `.netrc`, `.git-credentials`, a file inside a `.ssh`, `.gnupg`, `.aws` or
`.azure` directory), or by where it lies: the user's credential directories and files
under HOME (`HOME_SECRETS`), massgen's own config, a few system files, and whatever the
caller adds (the run's log directory). Stdlib only, so any layer may use it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

# Any case: `.ENV` is `.env` where the file system ignores case.
_NAME = re.compile(
    r"^\.env(\..+)?$|^id_(rsa|dsa|ecdsa|ed25519)(\..+)?$|^\.netrc$|^_netrc$|^\.pgpass$"
    r"|^\.git-credentials$|^\.npmrc$|^\.pypirc$|\.(pem|key|p12|pfx|jks|keystore|kdbx)$",
    re.IGNORECASE,
)
_NOT_SECRET = re.compile(r"^\.env\.(example|sample|template|dist|defaults)$", re.IGNORECASE)
# A file anywhere inside a directory of these names is a credential.
_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure"})
# Under HOME, files and directories of credentials (and massgen's own config, with keys).
HOME_SECRETS: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".config/massgen",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
)
SYSTEM_SECRETS: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh",
    "/etc/sudoers",
    "/etc/sudoers.d",
)
# Relative to the project (the directory massgen runs in): its keys and its runs' logs.
PROJECT_SECRETS: tuple[str, ...] = (".env", ".massgen")


def secret_name(rel: str) -> str | None:
    """Why a relative (or absolute) `/`-separated path is secret by its names, or None."""
    parts = PurePosixPath(rel).parts
    if not parts:
        return None
    name = parts[-1]
    if _NAME.search(name) and not _NOT_SECRET.match(name):
        return f"`{name}` holds secrets"
    if any(p.lower() in _DIRS for p in parts[:-1]):
        return f"`{name}` is in a directory of credentials"
    return None


def home_secrets(home: Path) -> tuple[Path, ...]:
    return tuple(home / name for name in HOME_SECRETS)


def secret_path(path: Path, home: Path, extra: Iterable[Path] = ()) -> str | None:
    """Why the absolute, resolved `path` is secret, or None: by where it lies (HOME's
    credentials, the system's, `extra` such as the log directory), or by its names."""
    for root in (*home_secrets(home), *map(Path, SYSTEM_SECRETS), *extra):
        if _holds(root, path):
            return f"`{path}` is in a directory of credentials"
    return secret_name(path.as_posix())


def holds_home(root: Path, home: Path) -> bool:
    """Whether a directory `root` (resolved) contains HOME or is it."""
    return _holds(root, home)


def hidden_paths(home: Path, project: Path) -> tuple[Path, ...]:
    """What the command sandbox hides whatever else is readable."""
    return (
        *home_secrets(home),
        *(project / name for name in PROJECT_SECRETS),
        *map(Path, SYSTEM_SECRETS),
    )


def secrets_within(root: Path, limit: int = 20_000) -> list[Path]:
    """The secret files and credential directories found under `root` (no link followed,
    at most `limit` entries looked at): what a sandbox must mask in a readable tree."""
    found: list[Path] = []
    seen = 0
    for here, dirs, files in os.walk(root, followlinks=False):
        seen += len(dirs) + len(files)
        if seen > limit:
            break
        for name in dirs:
            if name.lower() in _DIRS:
                found.append(Path(here) / name)
        dirs[:] = [d for d in dirs if d.lower() not in _DIRS and d != ".git"]
        found += [Path(here) / f for f in files if secret_name(f)]
    return found


def _holds(root: Path, path: Path) -> bool:
    return path == root or path.is_relative_to(root)
