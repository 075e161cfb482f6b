"""MCP servers as tools, over the official `mcp` SDK (imported only here and below, so
configs without `mcp_servers` never load it).

    async with open_team(config, log_dir=..., warn=...) as toolboxes:
        toolboxes["agent_id"]   # an McpToolbox

`open_team` starts every server concurrently, each within its connect timeout. A server
that fails is skipped and reported (name, command, first stderr lines): through `report`,
once per agent that lost its tools (the team run makes that a `ToolSourceFailed` event),
or else through `warn`, once per server.
Isolation: one session per agent and server, unless the server says `shared: true`
(`config/mcp.py`). Every session closes when the `async with` ends, on any exit path.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

from massgen.config.mcp import HttpServer, StdioServer
from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.core.errors import ConfigError
from massgen.tools.mcp.breaker import Breaker
from massgen.tools.mcp.connection import Connection
from massgen.tools.mcp.toolbox import McpToolbox, Source

__all__ = ["McpToolbox", "open_team"]

Server = StdioServer | HttpServer
# (agent id, server name, what went wrong): one call per agent whose server did not start.
Report = Callable[[str, str, str], None]


@contextlib.asynccontextmanager
async def open_team(
    config: MassgenConfig,
    *,
    log_dir: Path | None,
    warn: Callable[[str], None],
    source: str | None = None,
    single: bool = False,
    report: Report | None = None,
) -> AsyncIterator[dict[str, McpToolbox]]:
    """Toolboxes for the agents that have `mcp_servers`, keyed by agent id. Raises
    ConfigError when a tool filter matches no tool of a server that started."""
    async with contextlib.AsyncExitStack() as stack:
        if log_dir is None:
            log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="massgen-")))
        plan = _plan(config, log_dir / "mcp")
        for connection in plan.connections.values():
            stack.push_async_callback(connection.aclose)
        failed = await _start_all(plan.connections)
        if report is None:
            for message in failed.values():
                warn(message)
        toolboxes = {}
        for index, agent in enumerate(config.agents):
            if agent.backend.mcp_servers:
                path = f"{'agent' if single else f'agents[{index}]'}.backend"
                if report is not None:
                    for server in agent.backend.mcp_servers:
                        if (key := plan.key(agent.id, server)) in failed:
                            report(agent.id, server.name, failed[key])
                sources = _sources(agent, plan, failed)
                _check_filters(agent, sources, failed, source, path)
                toolboxes[agent.id] = McpToolbox(sources)
        yield toolboxes


class _Plan:
    def __init__(self) -> None:
        self.connections: dict[tuple[str, str], Connection] = {}
        self.breakers: dict[tuple[str, str], Breaker] = {}

    def key(self, agent: str, server: Server) -> tuple[str, str]:
        return ("", server.model_dump_json()) if server.shared else (agent, server.name)


def _plan(config: MassgenConfig, logs: Path) -> _Plan:
    plan = _Plan()
    for agent in config.agents:
        for server in agent.backend.mcp_servers:
            key = plan.key(agent.id, server)
            if key not in plan.connections:
                stem = f"shared.{server.name}" if server.shared else f"{agent.id}.{server.name}"
                plan.connections[key] = Connection(server, logs / f"{stem}.stderr.log")
                plan.breakers[key] = Breaker()
    return plan


async def _start_all(connections: dict[tuple[str, str], Connection]) -> dict[tuple[str, str], str]:
    """Start every connection; what went wrong, by the key of each that failed."""
    keys = list(connections)
    outcomes = await asyncio.gather(
        *(connections[key].start() for key in keys), return_exceptions=True
    )
    failed = {}
    for key, outcome in zip(keys, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            failed[key] = _failure(connections[key], outcome)
    return failed


def _failure(connection: Connection, error: BaseException) -> str:
    server = connection.server
    why = "did not connect in time" if isinstance(error, TimeoutError) else _words(error)
    line = f"MCP server `{server.name}` ({server.describe()}) did not start: {why}; skipped"
    head = connection.stderr_head()
    if head:
        line += "\n  its stderr began:\n" + "\n".join("    " + s for s in head.splitlines())
    return line


def _words(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_words(e) for e in error.exceptions)
    return str(error) or type(error).__name__


def _sources(
    agent: AgentConfig, plan: _Plan, failed: Mapping[tuple[str, str], str]
) -> list[Source]:
    out = []
    for server in agent.backend.mcp_servers:
        key = plan.key(agent.id, server)
        if key in failed:
            continue
        allowed = server.allowed_tools if server.allowed_tools is not None else None
        if allowed is None:
            allowed = agent.backend.allowed_tools
        exclude = (*agent.backend.exclude_tools, *server.exclude_tools)
        out.append(Source(server, plan.connections[key], plan.breakers[key], allowed, exclude))
    return out


def _check_filters(
    agent: AgentConfig,
    sources: list[Source],
    failed: Mapping[tuple[str, str], str],
    file: str | None,
    path: str,
) -> None:
    """Every filter entry names a tool that exists (a typo would silently hide a tool)."""
    by_name = {s.server.name: s for s in sources}
    for index, server in enumerate(agent.backend.mcp_servers):
        if server.name not in by_name:
            continue
        one = [by_name[server.name]]
        for key in ("allowed_tools", "exclude_tools"):
            _check(getattr(server, key) or (), one, file, f"{path}.mcp_servers[{index}].{key}")
    if failed:  # the backend-level entries may name tools of a server that did not start
        return
    for key in ("allowed_tools", "exclude_tools"):
        _check(getattr(agent.backend, key) or (), sources, file, f"{path}.{key}")


def _check(entries: tuple[str, ...], sources: list[Source], file: str | None, path: str) -> None:
    for entry in entries:
        if not any(s.matches(entry, t.name) for s in sources for t in s.connection.tools):
            names = sorted(t.name for s in sources for t in s.connection.tools)
            raise ConfigError(
                f"`{entry}` matches no tool",
                file=file,
                path=path,
                fix="Tools that exist: " + (", ".join(names) or "(none)"),
            )
