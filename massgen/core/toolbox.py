"""The tool seam: every tool an agent may call sits behind a `Toolbox`.

    specs()                 what the model is offered
    await call(call, ctx)   run one call; always a `ToolResult`, never an exception

The agent loop (`coordination/agent.py`) is the only caller, and it reaches tools only
through the toolbox it was given, so a wrapper in front of a toolbox (the permission
engine) sees every call. Toolboxes compose with `Toolboxes`. A tool's failure is a result
the model reads (`is_error`), never an exception that ends the agent.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from massgen.core.effects import Effect, External
from massgen.core.types import ToolCall, ToolSpec

Phase = Literal["coordination", "presentation"]
# A running call's "how it is going" line, for the person watching (never the model).
Progress = Callable[[str], None]
# `External.server` for a tool whose box cannot say what a call does.
UNKNOWN_SERVER = "<unknown>"


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who calls, when, and where: the agent's id (never shown to a model), the phase
    (coordination, or the winner's final presentation), its workspace, if any, and the
    task: the user message of the conversation the call is made in (the question as this
    agent was given it, with the answers so far), "" where unknown.

    `progress`, when set (the tool round sets it per call), takes a progress line of the
    running call and shows it to the person watching (`ToolCallProgress`); bounded there,
    so a tool may call it as often as it likes. It must be called on the event loop's
    thread. None: nobody is watching, a tool says nothing."""

    agent: str
    phase: Phase = "coordination"
    workspace: Path | None = None
    task: str = ""
    progress: Progress | None = field(default=None, compare=False, repr=False)

    def report(self, message: str) -> None:
        """Say how the call is going, if anyone listens."""
        if self.progress is not None:
            self.progress(message)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What goes back to the model for one call."""

    call_id: str
    content: str
    is_error: bool = False
    truncated: bool = False  # cut to the size bound; the content says so too

    @classmethod
    def error(cls, call: ToolCall, message: str) -> ToolResult:
        return cls(call.id, f"Error: {message}", is_error=True)


class Toolbox(Protocol):
    def specs(self) -> tuple[ToolSpec, ...]: ...

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult: ...

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """What `call` would do, said before it runs, for the permission engine. A box that
        cannot tell returns `unknown_effects(call)`: unknown and external, never "no
        effect".

        Raises:
            ValueError: the arguments are malformed (the call would fail anyway).
        """
        ...


@dataclass(frozen=True, slots=True)
class Permit:
    """A gate's yes to one call: `run(ctx)` runs that call, at most once. The tool round
    runs a call only through its permit, inside the call's timeout."""

    call: ToolCall
    run: Callable[[ToolContext], Awaitable[ToolResult]] = field(compare=False, repr=False)


class Gate(ABC):
    """A toolbox that decides a call before running it (the permission engine's
    `Guarded`). The tool round asks `authorize` first, outside the call's timeout (a
    person's time to answer is not the tool's), and runs only what the permit runs."""

    @abstractmethod
    def specs(self) -> tuple[ToolSpec, ...]: ...

    @abstractmethod
    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]: ...

    @abstractmethod
    async def authorize(self, call: ToolCall, ctx: ToolContext) -> Permit | ToolResult:
        """A permit to run `call`, or the refusal the model reads."""

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Decide and run in one, for a caller outside a tool round."""
        verdict = await self.authorize(call, ctx)
        return verdict if isinstance(verdict, ToolResult) else await verdict.run(ctx)


def unknown_effects(call: ToolCall) -> tuple[Effect, ...]:
    """The effects of a call whose toolbox cannot say what it does."""
    return (External(UNKNOWN_SERVER, call.name),)


class NoTools:
    """The empty toolbox: what an agent without tools has."""

    def specs(self) -> tuple[ToolSpec, ...]:
        return ()

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return ToolResult.error(call, f"tool `{call.name}` is not available.")

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        return ()  # nothing runs: the call is answered "not available"


class Toolboxes:
    """Several toolboxes as one; a call goes to the toolbox that offers its name (the
    first, when two offer the same name)."""

    def __init__(self, boxes: Sequence[Toolbox]) -> None:
        self._boxes = tuple(boxes)

    def specs(self) -> tuple[ToolSpec, ...]:
        seen: set[str] = set()
        out: list[ToolSpec] = []
        for box in self._boxes:
            for spec in box.specs():
                if spec.name not in seen:
                    seen.add(spec.name)
                    out.append(spec)
        return tuple(out)

    def _owner(self, name: str) -> Toolbox | None:
        for box in self._boxes:
            if any(spec.name == name for spec in box.specs()):
                return box
        return None

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        box = self._owner(call.name)
        if box is None:
            return await NoTools().call(call, ctx)
        return await box.call(call, ctx)

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """The effects of `call`, from the box that would run it, so that a composition is
        as transparent to the permission engine as the box itself. A name no box offers
        has none (the call is refused without running). A box's `ValueError` (malformed
        arguments) propagates, as `Toolbox.effects` documents.
        """
        box = self._owner(call.name)
        if box is None:
            return ()
        return tuple(box.effects(call, ctx))


def arguments_of(text: str | None) -> dict[str, Any]:
    """A tool call's arguments as the JSON object they must be.

    Raises:
        ValueError: they are not JSON, or not an object (the message is for the model).
    """
    try:
        arguments = json.loads(text or "{}")
    except json.JSONDecodeError as error:
        raise ValueError(f"the arguments are not valid JSON ({error}).") from None
    if not isinstance(arguments, dict):
        raise ValueError("the arguments must be a JSON object.")
    return arguments
