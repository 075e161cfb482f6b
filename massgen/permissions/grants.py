"""Rules kept in files, and the grants an approver makes.

    .massgen/settings.json         the project's rules (checked in)
    .massgen/settings.local.json   the user's rules; "always" grants are appended here

Both hold `{"permissions": {"allow": [...], "ask": [...], "deny": [...]}}` (Claude Code's
shape); the predecessor's `{"permissions": {"rules": {"allow": [...]}}}` reads the same.
A grant is a rule for exactly what was approved: `Command(<the words>)` for each simple
command, `Read(//<path>)` / `Write(//<path>)`, `Fetch(domain:<host>)`, `mcp__<server>__<tool>`.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.core.errors import ConfigError
from massgen.permissions import rules
from massgen.permissions.subjects import Subject
from massgen.record.atomic import write_json

SETTINGS = Path(".massgen") / "settings.json"
LOCAL = Path(".massgen") / "settings.local.json"


@dataclass
class FileRules:
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)


def load(path: Path, project: Path) -> FileRules:
    """The rules of one settings file (none when it does not exist).

    Raises:
        ConfigError: unreadable JSON, a wrong shape, or a rule that can never match.
    """
    if not path.is_file():
        return FileRules()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(
            f"not readable JSON ({error})", file=str(path), fix="fix or delete the file"
        ) from None
    block = _block(data, path)
    found = FileRules()
    for bucket in rules.BUCKETS:
        texts = block.get(bucket, [])
        key = f"permissions.{bucket}"
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ConfigError(
                "must be a list of rule strings", file=str(path), path=key, fix=rules.FIX
            )
        for index, text in enumerate(texts):
            try:
                rules.parse(text, project)
            except rules.RuleError as error:
                raise ConfigError(
                    str(error), file=str(path), path=f"{key}[{index}]", fix=rules.FIX
                ) from None
        getattr(found, bucket).extend(texts)
    return found


def _block(data: Any, path: Path) -> dict[str, Any]:
    block = data.get("permissions", {}) if isinstance(data, dict) else None
    if isinstance(block, dict) and isinstance(block.get("rules"), dict):
        block = block["rules"]
    if not isinstance(block, dict):
        raise ConfigError(
            "`permissions` must be an object",
            file=str(path),
            path="permissions",
            fix='write {"permissions": {"allow": ["Command(git status)"]}}',
        )
    return block


def grant_rules(subjects: list[Subject]) -> list[str]:
    """The allow rules that stand for exactly these subjects (opaque ones have none)."""
    out: list[str] = []
    for s in subjects:
        if s.kind == "command" and not s.dynamic:
            out.append(f"Command({shlex.join(s.argv)})")
        elif s.kind in ("read", "write", "delete") and s.path is not None:
            if not any(c in s.target for c in "*?[()"):  # would read as a pattern
                out.append(f"{'Read' if s.kind == 'read' else 'Write'}(/{s.path.as_posix()})")
        elif s.kind == "fetch":
            out.append(f"Fetch(domain:{s.target})")
        elif s.kind == "mcp":
            server, _, tool = s.target.partition("/")
            out.append(f"mcp__{server}__{tool}")
    return list(dict.fromkeys(out))


def store(path: Path, allow: list[str]) -> None:
    """Append `allow` rules to the settings file at `path` (atomically; other keys kept)."""
    data: Any = {}
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        data = {}
    block = data.setdefault("permissions", {})
    if isinstance(block.get("rules"), dict):
        block = block["rules"]
    existing = block.setdefault("allow", [])
    existing.extend(rule for rule in allow if rule not in existing)
    write_json(path, data, fsync=True)
