"""A real `massgen serve` subprocess on a free loopback port, over loopback fakes."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from massgen.testing.fake_provider import Reply, cooperative_agent

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "test-token-0123456789"

_CHATTER = "Reading the question. Checking the arithmetic step by step. "
FINAL_MARKDOWN = (
    "## The answer\n\n**2 + 2 = 4**, checked by the whole team.\n\n"
    "- each agent answered on its own\n- every agent voted for the same answer\n\n"
    "`4` is also `0b100` in binary.\n"
)


def chatty_agent(request: dict[str, Any]) -> Reply:
    """`cooperative_agent` that thinks aloud first, and presents its answer in Markdown.
    An agent with a workspace writes its notes there before its first answer."""
    offered = {(t.get("function") or {}).get("name") for t in request.get("tools") or []}
    messages = request.get("messages") or []
    tool_results = [m for m in messages if m.get("role") == "tool"]
    answered = f"[{request.get('model')} answer " in json.dumps(messages)
    if {"new_answer", "write_file"} <= offered and not tool_results and not answered:
        notes = {"path": "notes.md", "content": "2 + 2 = 4\n"}
        return Reply(text=_CHATTER, tool_calls=[("write_file", notes)])
    reply = cooperative_agent(request)
    if reply.tool_calls:
        return dataclasses.replace(reply, text=_CHATTER + reply.text)
    if reply.text.startswith("Final answer from"):
        return dataclasses.replace(reply, text=FINAL_MARKDOWN)
    return reply


def write_team(path: Path, base_url: str, n: int = 3, *, workspaces: bool = False) -> Path:
    """A team of `n` on the fake at `base_url`; with `workspaces`, each has file tools."""
    backend = {"type": "chatcompletion", "base_url": base_url}
    names = ("careful", "balanced", "creative", "quick", "thorough")
    agents = [{"id": names[i], "backend": {**backend, "model": f"m{i}"}} for i in range(n)]
    for i, agent in enumerate(agents if workspaces else []):
        agent["backend"]["cwd"] = f"ws{i}"
    path.write_text(yaml.safe_dump({"agents": agents}))
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclasses.dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    folder: Path

    def get(self, path: str, token: str | None = TOKEN) -> tuple[int, Any]:
        request = urllib.request.Request(self.url + path)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())


def serve_env(folder: Path, token: str | None = TOKEN) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MASSGEN_")}
    env.update(HOME=str(folder / "home"), PYTHONPATH=str(ROOT))
    if token:
        env["MASSGEN_SERVE_TOKEN"] = token
    return env


@contextmanager
def running_server(folder: Path, *args: str, token: str | None = TOKEN) -> Iterator[Server]:
    port = free_port()
    argv = [sys.executable, "-m", "massgen", "serve", "--port", str(port), *args]
    process = subprocess.Popen(
        argv, cwd=folder, env=serve_env(folder, token), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}", process, folder)
    try:
        _wait_healthy(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(server: Server, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            output = server.process.stdout.read() if server.process.stdout else ""
            raise AssertionError(f"massgen serve exited {server.process.returncode}: {output}")
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("massgen serve did not answer /health in time")
