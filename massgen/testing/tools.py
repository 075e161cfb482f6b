"""An in-process `Toolbox` of Python functions, for tests and `bench/`.

Each tool is an async function of its JSON arguments returning text. Every call is
recorded (name, arguments, phase) so a test can say what really ran.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from massgen.core.effects import Effect
from massgen.core.toolbox import ToolContext, ToolResult, unknown_effects
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec

ToolFunction = Callable[..., Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Ran:
    name: str
    arguments: dict[str, Any]
    agent: str
    phase: str


@dataclass(slots=True)
class InProcessTools:
    """Tools by name: `add(name, function, ...)`, then hand it to a `Member` as its toolbox."""

    _tools: dict[str, tuple[ToolSpec, ToolFunction]] = field(default_factory=dict)
    ran: list[Ran] = field(default_factory=list)

    def add(
        self,
        name: str,
        function: ToolFunction,
        *,
        description: str = "",
        parameters: dict[str, Any] | None = None,
        read_only: bool | None = None,
    ) -> InProcessTools:
        schema = parameters or _schema_of(function)
        spec = ToolSpec(name, description or name, schema, ToolAnnotations(read_only=read_only))
        self._tools[name] = (spec, function)
        return self

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(spec for spec, _ in self._tools.values())

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        return unknown_effects(call)  # in-process functions say nothing of what they do

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        if call.name not in self._tools:
            return ToolResult.error(call, f"tool `{call.name}` is not available.")
        arguments = json.loads(call.arguments or "{}")
        self.ran.append(Ran(call.name, arguments, ctx.agent, ctx.phase))
        _, function = self._tools[call.name]
        return ToolResult(call.id, await function(**arguments))

    def calls_of(self, name: str) -> list[Ran]:
        return [ran for ran in self.ran if ran.name == name]


_JSON_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def _schema_of(function: ToolFunction) -> dict[str, Any]:
    """Arguments from the signature: `async def lookup(name: str)` takes a string `name`."""
    properties: dict[str, Any] = {}
    required = []
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
            continue
        annotation = parameter.annotation
        type_name = (
            annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        )
        properties[name] = {"type": _JSON_TYPES.get(type_name, "string")}
        if parameter.default is parameter.empty:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required}
