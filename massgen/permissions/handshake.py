"""The file handshake: asks answered through JSON files, for runs without a terminal.

Compatible with the predecessor's `approval_mode: file` (its spec §8). For each ask:

    <folder>/<agent>/req_<id>.json     written by us (atomically):
        {"id", "agent_id", "tool", "pattern", "risk", "reason", "preview",
         "status": "pending", "effects": [...], "phase", "created_at", "response_file"}
    <folder>/<agent>/resp_<id>.json    written by whoever answers:
        {"approved": true | false, "scope": "once" | "session" | "always", "feedback": "..."}

`id` is the first 16 hex digits of sha256(agent/tool/pattern), as before. We poll for the
response every `poll_seconds`, read it, delete it, and remove the request. No response
within `timeout_seconds`, a response that is not that shape, or `approved` anything but
`true`, is a deny. A response lying there before the request was written (a late answer
to an earlier ask of the same id) is removed first, so it cannot answer this one. Two asks
with the same id take turns.

    approver = handshake.from_config(".massgen/approvals", timeout_seconds=300)
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shlex
import time
from pathlib import Path
from typing import Any

from massgen.core.effects import Delete, External, Net, Read, Run, Write
from massgen.permissions.approval import ApprovalRequest, Choice, Operator
from massgen.permissions.describe import effects_text, visible

DEFAULT_FOLDER = Path(".massgen/approvals")
TIMEOUT_SECONDS = 300.0
POLL_SECONDS = 0.4
MAX_RESPONSE_BYTES = 64 * 1024  # an answer is a few dozen bytes; more is not an answer
MAX_PATTERN = 200
MAX_PREVIEW = 500
_SCOPES = {"once": Choice.ONCE, "session": Choice.SESSION, "always": Choice.ALWAYS}
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def from_config(
    folder: str | Path | None = None,
    timeout_seconds: float | None = None,
    *,
    base: Path | None = None,
) -> FileHandshake:
    """The handshake for the `permissions:` block's `approval_dir` (default
    `.massgen/approvals`), relative to `base` (default: the current directory)."""
    path = Path(folder).expanduser() if folder else DEFAULT_FOLDER
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return FileHandshake(path, timeout_seconds=timeout_seconds or TIMEOUT_SECONDS)


class FileHandshake:
    """An approver that writes each ask into `folder` and waits for an answer file."""

    operator: Operator = "human"

    def __init__(
        self,
        folder: Path,
        *,
        timeout_seconds: float = TIMEOUT_SECONDS,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.folder = folder
        self.timeout = timeout_seconds
        self.poll = poll_seconds
        # Per request id in flight: its lock and how many asks hold or wait for it.
        self._turns: dict[str, tuple[asyncio.Lock, int]] = {}

    async def ask(self, request: ApprovalRequest) -> Choice:
        request_id = request_id_for(request)
        lock, users = self._turns.get(request_id, (asyncio.Lock(), 0))
        self._turns[request_id] = (lock, users + 1)
        try:
            async with lock:
                return await self._exchange(request, request_id)
        finally:
            lock, users = self._turns[request_id]
            if users > 1:
                self._turns[request_id] = (lock, users - 1)
            else:
                del self._turns[request_id]

    async def _exchange(self, request: ApprovalRequest, request_id: str) -> Choice:
        folder = self.folder / _file_name(request.agent)
        asked, answer = folder / f"req_{request_id}.json", folder / f"resp_{request_id}.json"
        folder.mkdir(parents=True, exist_ok=True)
        answer.unlink(missing_ok=True)
        try:
            # Here, not in a thread: a cancelled ask must not leave its request behind.
            _write_atomically(asked, request_json(request, request_id, answer))
            return await self._wait(answer)
        finally:
            with contextlib.suppress(OSError):
                asked.unlink(missing_ok=True)

    async def _wait(self, answer: Path) -> Choice:
        deadline = time.monotonic() + self.timeout
        torn: bytes | None = None  # a response that did not parse, seen once
        while time.monotonic() < deadline:
            data = _read_bounded(answer)
            if data is not None:
                choice = parse_response(data)
                # A half-written file parses on the next poll; the same bad bytes twice do not.
                if choice is not None or torn == data:
                    answer.unlink(missing_ok=True)
                    return choice or Choice.DENY
                torn = data
            await asyncio.sleep(min(self.poll, max(0.0, deadline - time.monotonic())))
        return Choice.DENY


def request_id_for(request: ApprovalRequest) -> str:
    key = f"{request.agent}/{request.tool}/{pattern(request)}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def pattern(request: ApprovalRequest) -> str:
    """The predecessor's grant key: `command:<cmd>` or `<tool>:<path|host|server/tool>`."""
    for effect in request.effects:
        match effect:
            case Run(argv):
                return f"command:{shlex.join(argv)[:MAX_PATTERN]}"
            case Read(path) | Write(path) | Delete(path):
                return f"{request.tool}:{str(path)[:MAX_PATTERN]}"
            case Net(host):
                return f"{request.tool}:{host[:MAX_PATTERN]}"
            case External(server, tool):
                return f"{request.tool}:{server}/{tool}"[: len(request.tool) + 1 + MAX_PATTERN]
    return f"{request.tool}:*"


def request_json(request: ApprovalRequest, request_id: str, answer: Path) -> dict[str, Any]:
    return {
        "id": request_id,
        "agent_id": request.agent,
        "tool": request.tool,
        "pattern": pattern(request),
        "risk": request.risk,
        "reason": request.reason,
        "preview": request.arguments[:MAX_PREVIEW],
        "status": "pending",
        "effects": effects_text(request),
        "phase": request.phase,
        "created_at": time.time(),
        "response_file": str(answer),
        "response_shape": {"approved": True, "scope": "once|session|always", "feedback": ""},
    }


def parse_response(data: bytes) -> Choice | None:
    """The answer in `data`; DENY for a well-formed refusal or a wrong shape, None when
    `data` is not JSON at all (perhaps still being written)."""
    try:
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict) or body.get("approved") is not True:
        return Choice.DENY
    scope = body.get("scope", "once")
    return _SCOPES.get(scope, Choice.DENY) if isinstance(scope, str) else Choice.DENY


def _file_name(agent: str) -> str:
    """The agent's folder name: its id, with anything a path could misread replaced."""
    name = _UNSAFE_NAME.sub("_", agent)
    return visible(name, 100) if name.strip(".") else "_" + name


def _read_bounded(path: Path) -> bytes | None:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_RESPONSE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError:
        return b"\0unreadable"  # a response we cannot read is no yes
    return data if len(data) <= MAX_RESPONSE_BYTES else b"\0too large"


def _write_atomically(path: Path, body: dict[str, Any]) -> None:
    """Readers see no file or the whole file: written beside it, synced, renamed over."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as file:
            json.dump(body, file, indent=2)  # ASCII: a lone surrogate in a path still writes
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
