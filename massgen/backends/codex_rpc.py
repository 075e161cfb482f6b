"""The Codex app server as a child process, spoken to in its JSON-RPC over stdio
(`codex app-server`: one JSON object a line, the `jsonrpc` header left out).

`AppServer` sends requests and waits for their responses, and hands everything else the
server sends (notifications, and its own requests: approvals, dynamic tool calls) to the
caller through `incoming`. The process runs in its own session, so `close` ends it and
anything it started; what it writes to stderr is kept, bounded, for error messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from massgen.core.errors import BackendError

MAX_LINE = 16 * 2**20  # one message; a longer line ends the connection
STDERR_LINES = 40  # of its stderr, kept for the message when it fails
STOP_SECONDS = 3.0  # between SIGTERM and SIGKILL
Message = dict[str, Any]
_CLOSED: Message = {"method": "<closed>"}


class AppServer:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.incoming: asyncio.Queue[Message] = asyncio.Queue()
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next = 0
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._errors())]

    @classmethod
    async def start(cls, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> AppServer:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(env),
                cwd=cwd,
                limit=MAX_LINE,
                start_new_session=True,
            )
        except OSError as error:
            raise BackendError(
                f"could not start the Codex CLI ({error})", provider="codex"
            ) from None
        return cls(process)

    async def request(self, method: str, params: Mapping[str, Any]) -> Any:
        self._next += 1
        request_id = self._next
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send({"method": method, "id": request_id, "params": dict(params)})
        except BaseException:  # not sent: the error raised here is the one to read
            self._pending.pop(request_id, None)
            if not future.cancel() and not future.cancelled():
                future.exception()  # the reader failed it meanwhile: read, said by this one
            raise
        return await future

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: Message = {"method": method}
        if params is not None:
            message["params"] = dict(params)
        await self._send(message)

    async def respond(self, request_id: Any, result: Mapping[str, Any]) -> None:
        await self._send({"id": request_id, "result": dict(result)})

    async def refuse(self, request_id: Any, reason: str) -> None:
        await self._send({"id": request_id, "error": {"code": -32601, "message": reason}})

    async def failed(self, what: str) -> BackendError:
        """An error naming what went wrong and the last of what Codex said on stderr
        (read to its end first, where the process has ended)."""
        if self.process.returncode is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._tasks[1]), STOP_SECONDS)
        code = self.process.returncode
        said = " | ".join(line for line in self.stderr if line)[-1500:]
        exited = f" (exit status {code})" if code is not None else ""
        return BackendError(
            f"the Codex CLI {what}{exited}" + (f": {said}" if said else ""), provider="codex"
        )

    async def _send(self, message: Message) -> None:
        stdin = self.process.stdin
        try:
            if stdin is None or stdin.is_closing():
                raise ConnectionError
            stdin.write((json.dumps(message) + "\n").encode())
            await stdin.drain()
        except (ConnectionError, RuntimeError):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), STOP_SECONDS)
            raise await self.failed("exited") from None

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                with contextlib.suppress(ValueError):
                    self._route(json.loads(line))
        except (ValueError, ConnectionError):  # a line over MAX_LINE, a broken pipe
            pass
        finally:
            await self.process.wait()
            error = await self.failed("exited")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)
            self._pending.clear()
            self.incoming.put_nowait(_CLOSED)

    def _route(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if "method" in message:  # a notification, or a request of the server's
            self.incoming.put_nowait(message)
            return
        future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in message:
            error = message["error"] or {}
            text = error.get("message") if isinstance(error, dict) else str(error)
            future.set_exception(BackendError(f"Codex refused: {text}", provider="codex"))
        else:
            future.set_result(message.get("result"))

    async def _errors(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        with contextlib.suppress(ValueError, ConnectionError):
            while line := await stderr.readline():
                self.stderr.append(line.decode(errors="replace").rstrip()[:500])

    async def close(self) -> None:
        """Ends the process and everything it started (its session), then the readers."""
        process = self.process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        if process.returncode is None:
            _signal(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), STOP_SECONDS)
            except TimeoutError:
                _signal(process.pid, signal.SIGKILL)
                await process.wait()
        _signal(process.pid, signal.SIGKILL)  # what it left behind in its session
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def closed(message: Message) -> bool:
    return message is _CLOSED


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
