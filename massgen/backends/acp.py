"""A client of the Agent Client Protocol: JSON-RPC 2.0, one JSON object per line, over a
child process's stdin and stdout (`gemini --acp`).

We send requests (`initialize`, `session/new`, `session/prompt`) and await their
results; the agent sends notifications (`session/update`) and requests of its own
(`session/request_permission`, `fs/write_text_file`), which `serve` answers. Whatever
goes wrong in a handler is answered as an error, so the agent never waits on us.

Bounded: a line is at most MAX_LINE bytes, the stderr kept for messages its last
STDERR_TAIL characters; the child runs in its own process group, which `close` ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

MAX_LINE = 16 * 2**20  # one message; a file's content travels inside one
STDERR_TAIL = 2000
CLOSE_GRACE_S = 3.0
STDERR_WAIT_S = 1.0  # for the last words of an agent that exited
Json = dict[str, Any]
Handler = Callable[[str, Json], Awaitable[Any]]
Notify = Callable[[str, Json], None]


class RemoteError(Exception):
    """The agent answered a request with a JSON-RPC error."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.code = error.get("code")
        super().__init__(str(error.get("message") or "error"))


class Ended(Exception):
    """The agent's process ended (or closed its stdout) with requests still open."""


class Connection:
    """One agent process and the requests in flight to it."""

    def __init__(self, process: asyncio.subprocess.Process, serve: Handler, notify: Notify):
        self.process = process
        self._serve = serve
        self._notify = notify
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._stderr = ""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader = asyncio.create_task(self._read())
        self._stderr_reader = asyncio.create_task(self._read_stderr())

    @classmethod
    async def start(
        cls, argv: Sequence[str], cwd: str, env: Mapping[str, str], serve: Handler, notify: Notify
    ) -> Connection:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=MAX_LINE,
            start_new_session=True,  # its own group: `close` ends whatever it started
        )
        return cls(process, serve, notify)

    @property
    def stderr_tail(self) -> str:
        return self._stderr[-STDERR_TAIL:].strip()

    async def request(self, method: str, params: Json) -> Any:
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
            return await future
        finally:
            self._waiting.pop(ident, None)

    async def _send(self, message: Json) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            raise Ended("the agent's stdin is closed")
        stdin.write(json.dumps(message).encode() + b"\n")
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise Ended("the agent's stdin is closed") from None

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                self._dispatch(line)
        except (ValueError, asyncio.LimitOverrunError):
            pass  # a line past MAX_LINE: the connection is over
        code = await self.process.wait()
        # What it said last (why it died) belongs in the error: let stderr drain first.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_reader), STDERR_WAIT_S)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(Ended(f"exited with code {code}"))

    def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return  # not protocol (the agent's stray output): ignored
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if method is None:
            future = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RemoteError(message["error"] or {}))
                else:
                    future.set_result(message.get("result"))
            return
        given = message.get("params")
        params: Json = given if isinstance(given, dict) else {}
        if "id" not in message:
            self._notify(str(method), params)
            return
        task = asyncio.create_task(self._answer(message["id"], str(method), params))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, ident: Any, method: str, params: Json) -> None:
        try:
            result = await self._serve(method, params)
            reply: Json = {"jsonrpc": "2.0", "id": ident, "result": result}
        except Exception as error:  # any failure is an error answer, never a hang
            reply = {
                "jsonrpc": "2.0",
                "id": ident,
                "error": {"code": -32603, "message": str(error)},
            }
        with contextlib.suppress(Ended):
            await self._send(reply)

    async def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        while chunk := await stderr.read(4096):
            self._stderr = (self._stderr + chunk.decode(errors="replace"))[-4 * STDERR_TAIL :]

    async def close(self) -> None:
        """End the agent: stdin closed, a grace period, then its whole process group."""
        process = self.process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_GRACE_S):
                await process.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # its children too, exited or not
        await process.wait()
        for task in (*self._tasks, self._reader, self._stderr_reader):
            task.cancel()
        await asyncio.gather(
            *self._tasks, self._reader, self._stderr_reader, return_exceptions=True
        )
