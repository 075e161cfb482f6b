"""One session with one MCP server, owned by a task that holds its `async with`s.

The SDK's transports are anyio task groups, which must be entered and left in the same
task; a task per server lets servers start concurrently and close on any exit path. The
task ends when the server goes away (its stdout closes, the HTTP stream drops) or when
`aclose` asks it to; the next call then starts a fresh one (reconnection).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
import httpx
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.session import ProgressFnT
from mcp.types import CONNECTION_CLOSED

from massgen.config.mcp import HttpServer, StdioServer
from massgen.core.aio import unless

# Errors of the connection, not of the tool: a retry on a fresh session may succeed.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    httpx.TransportError,
    ConnectionError,
    BrokenPipeError,
)
_PYTHONS = {"python", "python3"}
T = TypeVar("T")


class ServerLost(Exception):
    """The server went away (crashed, closed its stdout, dropped the connection)."""


def is_transport_error(error: BaseException) -> bool:
    if isinstance(error, McpError):
        return error.error.code == CONNECTION_CLOSED
    return isinstance(error, (ServerLost, *TRANSPORT_ERRORS))


class Connection:
    """A server's session: `start`, `call`, `tools` (cached), `aclose`."""

    def __init__(self, server: StdioServer | HttpServer, errlog: Path) -> None:
        self.server = server
        self.errlog = errlog
        self.tools: tuple[types.Tool, ...] = ()
        self.version = 0  # bumped whenever `tools` changes
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._gone = asyncio.Event()  # set when the current session's task ends
        self._stopping = False
        self._stale = False
        self._lock = asyncio.Lock()
        self._log: TextIO | None = None

    # --- lifetime ---------------------------------------------------------------------

    async def start(self) -> None:
        """Connect within the connect timeout. Raises the connection's error (or
        TimeoutError); the half-started server is closed first."""
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        self._stopping, self._session = False, None
        self._gone = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(ready), name=f"mcp:{self.server.name}")
        try:
            async with asyncio.timeout(self.server.connect_timeout_seconds):
                await asyncio.shield(ready)
        except BaseException:
            await self._stop()
            raise

    async def aclose(self) -> None:
        await self._stop()
        if self._log is not None:
            self._log.close()
            self._log = None

    async def _stop(self) -> None:
        task = self._task
        if task is None:
            return
        self._stopping = True
        self._wake.set()
        try:
            # A session still starting is cancelled; a live one closes in its own time.
            async with asyncio.timeout(10 if self._session is not None else 0):
                await asyncio.shield(task)
        except BaseException:  # it would not stop in time (or failed): cancel it
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._task, self._session = None, None

    def stderr_head(self, lines: int = 5) -> str:
        """The first lines the server wrote to stderr (for a start-up report)."""
        try:
            with self.errlog.open(encoding="utf-8", errors="replace") as file:
                head = [line.rstrip() for _, line in zip(range(lines), file, strict=False)]
        except OSError:
            return ""
        return "\n".join(line for line in head if line)

    # --- calls ------------------------------------------------------------------------

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        progress: Callable[[str], None] | None = None,
    ) -> types.CallToolResult:
        """One tool call on a live session (reconnecting first if the server went away),
        the server's progress notifications for it passed to `progress` as text.
        Raises TimeoutError, McpError, or a transport error (`is_transport_error`)."""
        async with self._lock:
            if self._task is None or self._task.done():
                await self._start()
        session = self._session
        if session is None:
            raise ServerLost(f"MCP server `{self.server.name}` is not connected")
        gone = self._gone
        async with asyncio.timeout(self.server.call_timeout_seconds):
            reported = None if progress is None else _progress_text(progress)
            call = session.call_tool(tool, arguments, progress_callback=reported)
            return await _unless_gone(gone, call)

    async def drop(self) -> None:
        """Close the session after a transport error, so the next call reconnects."""
        async with self._lock:
            await self._stop()

    # --- the owning task --------------------------------------------------------------

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self._transport() as (read, write), anyio.create_task_group() as group:
                relay_in, relay_out = anyio.create_memory_object_stream[Any](0)
                group.start_soon(self._relay, read, relay_in)
                async with ClientSession(relay_out, write, message_handler=self._on_message) as s:
                    await s.initialize()
                    await self._list_tools(s)
                    self._session = s
                    ready.set_result(None)
                    await self._serve(s)
                group.cancel_scope.cancel()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else ServerLost())
            if not isinstance(error, Exception):
                raise
        finally:
            self._session = None
            self._gone.set()
            if not ready.done():
                ready.set_exception(ServerLost("the server closed before it was ready"))

    async def _serve(self, session: ClientSession) -> None:
        while not self._stopping:
            await self._wake.wait()
            self._wake.clear()
            if self._stale and not self._stopping:
                self._stale = False
                await self._list_tools(session)

    async def _relay(self, read: Any, out: Any) -> None:
        """Pass messages on to the session; when the server's side ends, close the session's
        side too (pending calls fail with "connection closed") and wake the owner."""
        try:
            async with out:
                async for message in read:
                    await out.send(message)
        finally:
            self._stopping = True
            self._wake.set()

    async def _list_tools(self, session: ClientSession) -> None:
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await session.list_tools(cursor) if cursor else await session.list_tools()
            tools += page.tools
            cursor = page.nextCursor
            if not cursor:
                break
        self.tools = tuple(tools)
        self.version += 1

    async def _on_message(self, message: Any) -> None:
        # Runs inside the session's receive loop: it may not wait for a response itself,
        # so a changed tool list is fetched by the owner task.
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ToolListChangedNotification
        ):
            self._stale = True
            self._wake.set()
        # Exceptions here are lines the server printed that are not JSON-RPC: ignored.

    def _transport(self) -> contextlib.AbstractAsyncContextManager[tuple[Any, Any]]:
        server = self.server
        if isinstance(server, StdioServer):
            return self._stdio(server)
        return self._http(server)

    @contextlib.asynccontextmanager
    async def _stdio(self, server: StdioServer) -> AsyncIterator[tuple[Any, Any]]:
        if self._log is None:
            self.errlog.parent.mkdir(parents=True, exist_ok=True)
            self._log = self.errlog.open("a", encoding="utf-8")
        async with stdio_client(stdio_parameters(server), errlog=self._log) as (read, write):
            yield read, write

    @contextlib.asynccontextmanager
    async def _http(self, server: HttpServer) -> AsyncIterator[tuple[Any, Any]]:
        # Reads may wait as long as a call may; connecting has the connect timeout.
        timeout = httpx.Timeout(server.call_timeout_seconds, connect=server.connect_timeout_seconds)
        client = create_mcp_http_client(headers=dict(server.headers), timeout=timeout)
        async with (
            client,
            streamable_http_client(server.url, http_client=client) as (read, write, _),
        ):
            yield read, write


def _progress_text(send: Callable[[str], None]) -> ProgressFnT:
    """The SDK's progress callback, as one line of text: "3/10 message", "3 message"."""

    async def reported(progress: float, total: float | None, message: str | None) -> None:
        count = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        send(f"{count} {message}" if message else count)

    return reported


async def _unless_gone(gone: asyncio.Event, call: Coroutine[Any, Any, T]) -> T:
    """The call's result, or ServerLost when the session ends first (the SDK does not
    always fail a pending request when its server dies)."""
    task = await unless(call, gone.wait())
    if task.cancelled():
        raise ServerLost("the server went away during the call")
    return task.result()


def stdio_parameters(server: StdioServer) -> StdioServerParameters:
    """The child's command and environment. The SDK adds only PATH/HOME-like basics to
    `env`, never the rest of ours (so no API keys). `command: python` is the Python
    running massgen, with its import path, so a server shipped with massgen (or installed
    beside it) runs from any directory."""
    command, env = server.command, dict(server.env)
    if command in _PYTHONS:
        command = sys.executable
        if "PYTHONPATH" in os.environ and "PYTHONPATH" not in env:
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(command=command, args=list(server.args), env=env, cwd=server.cwd)
