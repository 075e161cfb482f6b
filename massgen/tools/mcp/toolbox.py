"""`McpToolbox`: one agent's MCP servers behind the tool seam (`tools/base.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp import McpError, types

from massgen.config.mcp import HttpServer, StdioServer
from massgen.core.effects import Effect, External
from massgen.core.toolbox import UNKNOWN_SERVER, ToolContext, ToolResult, arguments_of
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.tools.mcp.breaker import Breaker
from massgen.tools.mcp.connection import Connection, is_transport_error
from massgen.tools.mcp.content import result_text
from massgen.tools.mcp.naming import exposed_names, raw_name

Server = StdioServer | HttpServer


@dataclass(slots=True)
class Source:
    """One server as one agent sees it: its session (maybe shared) and its filters."""

    server: Server
    connection: Connection
    breaker: Breaker
    allowed: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    def visible(self) -> tuple[types.Tool, ...]:
        return tuple(t for t in self.connection.tools if self._passes(t.name))

    def _passes(self, tool: str) -> bool:
        if self.allowed is not None and not any(self.matches(e, tool) for e in self.allowed):
            return False
        return not any(self.matches(e, tool) for e in self.exclude)

    def matches(self, entry: str, tool: str) -> bool:
        """A filter entry names a tool bare or prefixed (`mcp__<server>__<tool>`)."""
        return entry in (tool, raw_name(self.server.name, tool))


class McpToolbox:
    """The tools of some MCP servers, named `mcp__<server>__<tool>`."""

    def __init__(self, sources: Sequence[Source]) -> None:
        self._sources = {source.server.name: source for source in sources}
        self._versions: tuple[int, ...] = ()
        self._specs: tuple[ToolSpec, ...] = ()
        self._routes: dict[str, tuple[Source, str]] = {}

    def specs(self) -> tuple[ToolSpec, ...]:
        self._refresh()
        return self._specs

    def _refresh(self) -> None:
        versions = tuple(s.connection.version for s in self._sources.values())
        if versions == self._versions:
            return
        pairs = [(s, t) for s in self._sources.values() for t in s.visible()]
        names = exposed_names([(s.server.name, t.name) for s, t in pairs])
        self._routes = {names[(s.server.name, t.name)]: (s, t.name) for s, t in pairs}
        self._specs = tuple(
            _spec(names[(s.server.name, t.name)], t, trusted=s.server.trusted) for s, t in pairs
        )
        self._versions = versions

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """`External(server, tool)`: what an MCP tool does is unknown. Only a trusted
        server's `readOnlyHint` marks it read-only; an untrusted server's hints are ignored."""
        self._refresh()
        route = self._routes.get(call.name)
        if route is None:
            return (External(UNKNOWN_SERVER, call.name),)
        source, tool = route
        hints = next((t.annotations for t in source.visible() if t.name == tool), None)
        read_only = source.server.trusted and hints is not None and hints.readOnlyHint is True
        untrusted = not source.server.trusted
        return (External(source.server.name, tool, read_only, untrusted_server=untrusted),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        self._refresh()
        route = self._routes.get(call.name)
        if route is None:
            return ToolResult.error(call, f"tool `{call.name}` is not available.")
        source, tool = route
        try:
            arguments = arguments_of(call.arguments)
        except ValueError as error:
            return ToolResult.error(call, str(error))
        return await _call(source, tool, arguments, call, ctx)


async def _call(
    source: Source, tool: str, arguments: dict[str, Any], call: ToolCall, ctx: ToolContext
) -> ToolResult:
    name, server = source.server.name, source.server
    if (left := source.breaker.open_for()) is not None:
        return ToolResult.error(
            call,
            f"MCP server `{name}` is unavailable after {source.breaker.failures} failed calls"
            f" in a row (circuit open; retry in {left:.0f} s). Continue without it.",
        )
    for _ in range(server.max_retries + 1):
        try:
            result = await source.connection.call(tool, arguments, ctx.progress)
        except TimeoutError:
            source.breaker.failed()
            return ToolResult.error(
                call,
                f"`{tool}` on MCP server `{name}` timed out after {server.call_timeout_seconds:g} s.",
            )
        except McpError as error:
            if is_transport_error(error):
                await _lost(source)
                continue
            source.breaker.succeeded()  # the server answered: it is alive
            return ToolResult.error(call, f"MCP server `{name}`: {error.error.message}")
        except Exception as error:
            if not is_transport_error(error):
                source.breaker.failed()
                return ToolResult.error(call, f"MCP server `{name}` failed: {_say(error)}")
            await _lost(source)
            continue
        source.breaker.succeeded()
        return _result(call, result, server.max_result_chars)
    source.breaker.failed()
    return ToolResult.error(
        call, f"MCP server `{name}` could not be reached after {server.max_retries + 1} tries."
    )


async def _lost(source: Source) -> None:
    await source.connection.drop()


def _result(call: ToolCall, result: types.CallToolResult, limit: int) -> ToolResult:
    text, truncated = result_text(result, limit)
    if result.isError:
        return ToolResult(call.id, f"Error: {text}", is_error=True, truncated=truncated)
    return ToolResult(call.id, text, truncated=truncated)


def _say(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _spec(name: str, tool: types.Tool, *, trusted: bool) -> ToolSpec:
    hints = tool.annotations
    annotations = ToolAnnotations()
    if trusted and hints is not None:
        annotations = ToolAnnotations(
            read_only=hints.readOnlyHint,
            destructive=hints.destructiveHint,
            open_world=hints.openWorldHint,
        )
    return ToolSpec(name, tool.description or tool.title or "", dict(tool.inputSchema), annotations)
