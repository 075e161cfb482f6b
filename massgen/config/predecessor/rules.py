"""What becomes of one predecessor key: accepted with no effect (`NoEffect`, and why) or
refused (`Refused`, why and what to use instead); the `Note` a key that asked for something
leaves, and `apply`, which applies a table of such dispositions (`keys.py`) to one block."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NoReturn

from massgen.config.backend_groups import FLAT_KEYS
from massgen.core.errors import ConfigError


@dataclass(frozen=True, slots=True)
class NoEffect:
    why: str


@dataclass(frozen=True, slots=True)
class Refused:
    why: str
    instead: str


Disposition = NoEffect | Refused


@dataclass(frozen=True, slots=True)
class Note:
    """What became of one predecessor key that asked for something (`--validate` prints
    them)."""

    path: str
    why: str
    said: str = "has no effect here"  # or what it was mapped to

    def __str__(self) -> str:
        return f"`{self.path}` {self.said}: {self.why}"


def refuse(path: str, disposition: Refused, source: str) -> NoReturn:
    raise ConfigError(
        f"`{path}` is not supported: {disposition.why}", file=source, fix=disposition.instead
    )


def apply(
    node: dict[str, Any], table: dict[str, Disposition], at: str, notes: list[Note], source: str
) -> None:
    """Drop each of `node`'s keys that `table` names (with a note when it asked for
    something), or refuse it."""
    for key in [k for k in node if k in table]:
        path = f"{at}.{key}" if at else key
        value = node[key]
        if is_off(value):
            del node[key]
            continue
        disposition = table[key]
        if isinstance(disposition, Refused):
            refuse(path, disposition, source)
        del node[key]
        notes.append(Note(path, disposition.why))


def is_off(value: Any) -> bool:
    """An "off" value (false, 0, null, empty, `enabled: false`) asks for nothing."""
    if isinstance(value, dict) and "enabled" in value:
        return value["enabled"] is False
    return value is None or value is False or value == 0 or value in ([], {}, "")


def word(value: Any) -> str | None:
    """A value compared against names: a string, else None (the schema says what is wrong
    with it; comparing a list here would raise instead)."""
    return value if isinstance(value, str) else None


def place(backend: dict[str, Any], flat: str) -> tuple[dict[str, Any], str]:
    """Where this backend block keeps a group's key (`command_line_network`), so that it is
    never written both ways: flat where the file wrote it flat, else inside the group where
    the block has one (`command_line:`), else flat. (The mapping, and the key in it.)"""
    group, field = FLAT_KEYS[flat]
    block = backend.get(group)
    if isinstance(block, dict) and flat not in backend:
        return block, field
    return backend, flat


def set_key(backend: dict[str, Any], flat: str, value: Any, *, default: bool = False) -> None:
    """Set a group's key where the block keeps it (`place`); `default`: only if unset."""
    node, key = place(backend, flat)
    if not (default and key in node):
        node[key] = value


_AGENT_KEY = re.compile(r"^agents\[(\d+)\]\.(.+)$")


def grouped(notes: list[Note]) -> list[str]:
    """The notes as lines, one per key and reason: the same key of several agents is one
    line naming them (`agents[*].backend.x (agents 0, 1, 2)`), not one line each."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for note in notes:
        match = _AGENT_KEY.match(note.path)
        rest, agent = (match.group(2), match.group(1)) if match else (note.path, "")
        groups.setdefault((rest, note.why, note.said), []).append(agent)
    lines = []
    for (rest, why, said), agents in groups.items():
        if len(agents) > 1 and all(agents):
            path = f"agents[*].{rest}` (agents {', '.join(agents)})"
            lines.append(f"`{path} {said}: {why}")
        else:
            lines += [str(Note(f"agents[{a}].{rest}" if a else rest, why, said)) for a in agents]
    return lines
