"""`massgen mcp` over stdio without a thread per message.

The official SDK's stdio transport (`mcp.server.stdio.stdio_server`) reads stdin and
writes stdout through worker threads (`anyio.wrap_file`): every request line, progress
notification and result waits for a thread, then for the event loop, which a team run
keeps busy. Here stdin and stdout are non-blocking pipes on the event loop itself, handed
to that same SDK function (it takes any object that iterates lines and writes text), so
JSON-RPC parsing, sessions and EOF handling stay the SDK's own.

Bounded: a line over `MAX_LINE_BYTES` is not parsed; a request among them is answered
with a JSON-RPC error that says why, and reading goes on with the next line. When stdin
or stdout is not a pipe or socket (a terminal, a file), the SDK's transport is used.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from typing import Any, cast

import anyio
import mcp.types as types
from mcp.server.fastmcp import FastMCP
from mcp.server.stdio import stdio_server

MAX_LINE_BYTES = 4 * 1024 * 1024  # a 200,000-character question or diff is well under it
ID_SCAN_BYTES = 4096  # where the id of an over-long request is looked for, at each end
# The last member of the object, so top-level: nothing but its closing brace follows.
_LAST_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$')


async def serve(server: FastMCP, out: Out) -> None:
    """Serve `server` on this process's stdin and stdout until the client leaves; `out`
    is stdout (built first, so that the tools can write progress with `out.send_now`)."""
    fds = _claim_stdio()
    if fds is None:
        await server.run_stdio_async()
        return
    lines = _Lines(await _connect(fds, out), out)
    # The SDK types these as anyio files; it only iterates the one and writes the other.
    async with stdio_server(cast(Any, lines), cast(Any, out)) as (read, write):
        # FastMCP has no public way to run on given streams; its low-level server has.
        low = server._mcp_server
        await low.run(read, write, low.create_initialization_options())
    out.close()


async def _connect(fds: tuple[int, int], out: Out) -> asyncio.StreamReader:
    """stdin as a stream on the event loop, stdout through `out`."""
    loop = asyncio.get_running_loop()
    # Each transport closes its file when it closes.
    await loop.connect_write_pipe(lambda: out, open(fds[1], "wb", buffering=0))  # noqa: SIM115
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    protocol = asyncio.StreamReaderProtocol(reader)
    pipe = open(fds[0], "rb", buffering=0)  # noqa: SIM115
    stdin, _ = await loop.connect_read_pipe(lambda: protocol, pipe)
    out.on_lost = stdin.close  # stdout gone: stdin is closed, the session ends as at EOF
    return reader


def _claim_stdio() -> tuple[int, int] | None:
    """Private copies of stdin and stdout for the transport, with fds 0 and 1 pointed at
    /dev/null: a child process or a stray print cannot read or corrupt the protocol.
    None where either is not a pipe or socket (non-blocking mode would outlive us there)."""
    if os.name != "posix" or not (_is_pipe(0) and _is_pipe(1)):
        return None
    sys.stdout.flush()
    fds = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return fds


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class Out(asyncio.Protocol):
    """stdout as the SDK's transport writes it (`await write(text)`, `await flush()`):
    each message goes to the pipe at once; `flush` waits only while the client reads
    slower than we write (the transport's buffer is over its high-water mark).

    `send_now` writes a message from outside the SDK's session, in the caller's turn of
    the event loop: progress lines reach the client while the team run goes on, instead
    of after the session's hand-offs, each of which waits behind the run's own work."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self._lost = False
        self.on_lost = lambda: None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.WriteTransport, transport)

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._writable.set()
        self.on_lost()

    def send_now(self, message: types.JSONRPCMessage) -> bool:
        """Write `message` now; False where this transport is not in use or is gone.
        Not held back while the client reads slowly: a run sends at most
        `progress.MAX_MESSAGES` short lines, and the transport buffers them."""
        if self._lost or self._transport is None:
            return False
        line = message.model_dump_json(by_alias=True, exclude_none=True) + "\n"
        self._transport.write(line.encode("utf-8"))
        return True

    async def write(self, text: str) -> None:
        if self._lost or self._transport is None:
            raise anyio.ClosedResourceError  # the SDK's writer ends quietly on it
        self._transport.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writable.wait()
        if self._lost:
            raise anyio.ClosedResourceError

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()  # what is buffered is still written


class _Lines:
    """stdin as the SDK's transport reads it (`async for line in stdin`), in UTF-8 with
    errors replaced as the SDK decodes it; over-long lines are refused, not parsed."""

    def __init__(self, reader: asyncio.StreamReader, out: Out) -> None:
        self._reader, self._out = reader, out

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:  # EOF; a last line without "\n"
                if not end.partial:
                    raise StopAsyncIteration from None
                line = end.partial
            except asyncio.LimitOverrunError as over:
                await self._refuse(over.consumed)
                continue
            except OSError:
                raise StopAsyncIteration from None
            return line.decode("utf-8", errors="replace")

    async def _refuse(self, buffered: int) -> None:
        """Skip the rest of an over-long line; answer it if it is a request."""
        head = await self._reader.readexactly(buffered)
        size, tail = len(head), head[-ID_SCAN_BYTES:]
        while True:
            try:
                chunk = await self._reader.readuntil(b"\n")
                ended = True
            except asyncio.LimitOverrunError as more:
                chunk, ended = await self._reader.readexactly(more.consumed), False
            except asyncio.IncompleteReadError as end:  # EOF inside the line
                chunk, ended = end.partial, True
            size, tail = size + len(chunk), (tail + chunk)[-ID_SCAN_BYTES:]
            if ended:
                break
        why = (
            f"the message is {size / 2**20:.1f} MiB, over the {MAX_LINE_BYTES // 2**20} MiB "
            "that massgen mcp reads; send less (name files in `context` instead of pasting them)"
        )
        print(f"massgen mcp: refused a message: {why}", file=sys.stderr)
        request_id = request_id_of(head[:ID_SCAN_BYTES], tail)
        if request_id is None:
            return
        error = types.ErrorData(code=types.INVALID_REQUEST, message=why)
        reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        await self._out.write(reply.model_dump_json(by_alias=True, exclude_none=True) + "\n")


def request_id_of(head: bytes, tail: bytes = b"") -> int | str | None:
    """The top-level "id" of a JSON-RPC message from its first and last bytes: where it is
    the last member (the official SDKs write it last), or comes before the first member
    too long to read in `head` (clients that write it first)."""
    last = _LAST_ID.search(tail.decode("utf-8", errors="replace"))
    if last:
        return cast(int | str, json.loads(last.group(1)))
    text = head.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return None
    at = _skip(text, at + 1)
    try:
        while text.startswith('"', at):
            key, at = decoder.raw_decode(text, at)
            at = _skip(text, at)
            if not text.startswith(":", at):
                return None
            value, at = decoder.raw_decode(text, _skip(text, at + 1))
            if key == "id":
                ok = isinstance(value, (int, str)) and not isinstance(value, bool)
                return value if ok else None
            at = _skip(text, at)
            at = _skip(text, at + 1) if text.startswith(",", at) else at
    except ValueError:  # cut off inside a member
        return None
    return None


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at
