"""What a tool call would do, as data: the permission engine decides on these, never on a
tool's name. A tool that knows its effects says so before it runs (`EffectfulToolbox`);
one that cannot tell (an MCP tool) is `External`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from massgen.core.toolbox import Toolbox, ToolContext
from massgen.core.types import ToolCall


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


class EffectfulToolbox(Toolbox, Protocol):
    """A toolbox that can say, before running a call, what the call would do.

    Raises:
        ValueError: the arguments are malformed (the call would fail anyway).
    """

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]: ...
