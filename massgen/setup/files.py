"""The files setup writes: `~/.config/massgen/.env` (keys) and `config.yaml` (the team).

Both are written whole through a temp file and a rename, with mode 0600, so an interrupted
write leaves the old file as it was. The `.env` is merged: lines for other keys, comments
and blank lines stay exactly as they were.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from massgen.record.atomic import write_text

_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
_PLAIN_VALUE = re.compile(r"^[A-Za-z0-9_\-.:/+=@]*$")


def config_dir(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".config" / "massgen"


def env_path(home: Path | None = None) -> Path:
    return config_dir(home) / ".env"


def config_path(home: Path | None = None) -> Path:
    return config_dir(home) / "config.yaml"


def merge_env(path: Path, updates: Mapping[str, str]) -> None:
    """Set `updates` in the .env at `path`, keeping every other line as it was.

    A key already present is replaced where it stands (every occurrence, so the file has
    one value for it); new keys are appended. The file ends with mode 0600.
    """
    if not updates:
        return
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    pending = dict(updates)
    out: list[str] = []
    for line in lines:
        match = _ASSIGNMENT.match(line)
        name = match.group(1) if match else None
        if name in updates:
            if name in pending:
                out.append(_assignment(name, pending.pop(name)))
            continue  # a second line for the same key would override ours
        out.append(line)
    out.extend(_assignment(name, value) for name, value in pending.items())
    write_text(path, "\n".join(out) + "\n")
    os.chmod(path, 0o600)


def _assignment(name: str, value: str) -> str:
    if _PLAIN_VALUE.match(value):
        return f"{name}={value}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{name}="{escaped}"'


def write_config(path: Path, config: Mapping[str, Any], *, header: str = "") -> None:
    """Write `config` as YAML (with `header` as # comments first), mode 0600."""
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    body = yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True)
    write_text(path, comments + body)
    os.chmod(path, 0o600)
