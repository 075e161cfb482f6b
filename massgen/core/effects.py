"""What a tool call would do, as data: the permission engine decides on these, never on a
tool's name. Every toolbox says what a call would do before it runs (`Toolbox.effects`); one that
cannot tell (an MCP tool) says `External`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Read:
    path: Path


@dataclass(frozen=True, slots=True)
class Write:
    path: Path


@dataclass(frozen=True, slots=True)
class Delete:
    path: Path


@dataclass(frozen=True, slots=True)
class Run:
    argv: tuple[str, ...]
    cwd: Path


@dataclass(frozen=True, slots=True)
class Net:
    host: str


@dataclass(frozen=True, slots=True)
class External:
    server: str
    tool: str
    # The tool says it only reads, and its server is trusted to say so (`trusted: true`);
    # an untrusted server's annotations never set this.
    read_only: bool = False
    # An MCP server not marked `trusted: true`: its tools' effects are unknown, so a run
    # nobody watches denies them (`permissions/risk.py`) unless a rule allows the server.
    untrusted_server: bool = False


Effect = Read | Write | Delete | Run | Net | External
