"""`mcp_servers:` under an agent's `backend:`, as the predecessor wrote it.

Either a mapping `{name: {type, command, ...}}` or a list `[{name, type, ...}]`; both
become a tuple of `McpServer`s. `type` may be left out: `command` means stdio, `url`
means streamable-http. Filters (`allowed_tools`, `exclude_tools`) take bare tool names
(`get_current_time`) or prefixed ones (`mcp__time__get_current_time`); that they match a
tool is checked once the server has listed its tools.

Isolation: each agent gets its own session (its own process, for stdio) of every server,
as in the predecessor, so one agent's server state never leaks into another's.
`shared: true` makes the agents whose configs name the same server (same name and same
settings) share one session for the whole run.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SERVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class _Server(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=SERVER_NAME.pattern)
    allowed_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    # Believe the server's tool annotations (read-only, destructive, open-world).
    trusted: bool = False
    # One session for every agent that names this server, instead of one per agent.
    shared: bool = False
    connect_timeout_seconds: float = Field(default=30, gt=0)
    call_timeout_seconds: float = Field(default=120, gt=0)
    # Retries of transport errors (a dropped connection, a crashed server); never of a
    # tool's own error.
    max_retries: int = Field(default=2, ge=0, le=10)
    # Characters of tool output kept for the model; the rest is cut, with a note.
    max_result_chars: int = Field(default=100_000, ge=1000)


class StdioServer(_Server):
    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    # The child's whole environment, besides PATH/HOME-like basics: the parent's API keys
    # are never passed on.
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


class HttpServer(_Server):
    type: Literal["streamable-http"] = "streamable-http"
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)

    def describe(self) -> str:
        return self.url


McpServer = Annotated[StdioServer | HttpServer, Field(discriminator="type")]

_TYPE_ALIASES = {"http": "streamable-http", "streamable_http": "streamable-http"}


def normalise_servers(value: Any) -> Any:
    """The dict form becomes the list form, and a missing `type` is inferred."""
    if isinstance(value, dict):
        value = [
            {"name": name, **body} if isinstance(body, dict) else body
            for name, body in value.items()
        ]
    if isinstance(value, list):
        value = [_with_type(entry) for entry in value]
    return value


def _with_type(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    entry = dict(entry)
    kind = entry.get("type")
    if kind is None:
        entry["type"] = "streamable-http" if "url" in entry and "command" not in entry else "stdio"
    elif isinstance(kind, str):
        entry["type"] = _TYPE_ALIASES.get(kind, kind)
    return entry


def unique_names(servers: tuple[StdioServer | HttpServer, ...]) -> None:
    seen: set[str] = set()
    for server in servers:
        if server.name in seen:
            raise ValueError(f"MCP server name {server.name!r} is used twice")
        seen.add(server.name)
