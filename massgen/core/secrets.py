"""What is secret: one definition for the permission engine, the file tools (reads and
walks) and the command sandbox's hidden paths, in every root.

A path is secret by its names anywhere (`.env*` but the examples, keys and certificates,
`id_rsa*`, `.netrc`, `.git-credentials`, and anything inside one of the places of
`HOME_SECRETS`: `.ssh`, `.aws`, `.config/gh`, `.config/massgen`, ..., wherever that place
is, so a copied home keeps its secrets), or by where it lies: those places under the real
HOME, a few system files, and whatever the caller adds (the run's log directory).
Stdlib only, so any layer may use it.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

# Any case: `.ENV` is `.env` where the file system ignores case.
_NAME = re.compile(
    r"^\.env(\..+)?$|^id_(rsa|dsa|ecdsa|ed25519)(\..+)?$|^\.netrc$|^_netrc$|^\.pgpass$"
    r"|^\.git-credentials$|^\.npmrc$|^\.pypirc$|\.(pem|key|p12|pfx|jks|keystore|kdbx)$",
    re.IGNORECASE,
)
_NOT_SECRET = re.compile(r"^\.env\.(example|sample|template|dist|defaults)$", re.IGNORECASE)
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
# Anywhere: the places of HOME_SECRETS, but `.docker` and `.kube`, which projects also use
# for Dockerfiles and manifests; of those, only the files that hold credentials.
_PLACES = tuple(
    tuple(name.split("/"))
    for name in (*HOME_SECRETS, ".docker/config.json", ".kube/config")
    if name not in (".docker", ".kube")
)
_ENDING: dict[str, list[tuple[str, ...]]] = {}
for _place in _PLACES:
    _ENDING.setdefault(_place[-1], []).append(_place)
_DEEPEST = max(len(p) for p in _PLACES)
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
    """Why a relative (or absolute) `/`-separated path is secret by its names, or None:
    a secret file name, or a place of credentials (`.ssh`, `.config/gh`, ... as under
    HOME) anywhere on the way, so a copy of a home directory keeps its secrets too."""
    parts = PurePosixPath(rel).parts
    if not parts:
        return None
    name = parts[-1]
    if _NAME.search(name) and not _NOT_SECRET.match(name):
        return f"`{name}` holds secrets"
    folded = tuple(p.lower() for p in parts)
    for places in _PLACES:
        n = len(places)
        if any(folded[i : i + n] == places for i in range(len(folded) - n + 1)):
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
    """The secret files and credential directories found under `root`: what a sandbox
    must mask in a readable tree. Breadth first (what lies near the top is found before
    a deep `node_modules` spends the bound), no link followed, `.git` not entered, at
    most `limit` entries looked at."""
    found: list[Path] = []
    queue: deque[tuple[Path, tuple[str, ...]]] = deque([(root, _folded(root))])
    seen = 0
    while queue and seen < limit:
        here, folded = queue.popleft()
        try:
            with os.scandir(here) as listing:
                entries = list(itertools.islice(listing, limit - seen))
        except OSError:
            continue
        seen += len(entries)
        for entry in sorted(entries, key=lambda e: e.name):
            if _secret_entry(folded, entry.name):
                found.append(here / entry.name)
            elif entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                queue.append((here / entry.name, (*folded, entry.name.lower())[-_DEEPEST:]))
    return sorted(found)


def _folded(path: Path) -> tuple[str, ...]:
    return tuple(p.lower() for p in path.parts)[-_DEEPEST:]


def _secret_entry(parent: tuple[str, ...], name: str) -> bool:
    """`secret_name` of `parent/name` where `parent` (folded) is not secret itself: only
    the name, and the places that end with it, need a look."""
    if _NAME.search(name) and not _NOT_SECRET.match(name):
        return True
    folded = name.lower()
    return any(
        parent[max(0, len(parent) - len(p) + 1) :] == p[:-1] for p in _ENDING.get(folded, ())
    )


def _holds(root: Path, path: Path) -> bool:
    return path == root or path.is_relative_to(root)
