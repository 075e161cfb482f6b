"""A real `massgen mcp` subprocess, reached with the official `mcp` client SDK.

The fake provider runs in the test process; the server reaches it over loopback. The
server gets a clean environment: a fresh HOME, no API keys but those a test gives.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
# A client's first JSON-RPC request, for the tests that speak the protocol by hand.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def write_team(path: Path, base_url: str, n: int = 3, *, workspaces: bool = False) -> Path:
    backend = {"type": "chatcompletion", "base_url": base_url}
    agents = [{"id": f"agent_{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(n)]
    for i, agent in enumerate(agents if workspaces else []):
        agent["backend"]["cwd"] = f"ws{i}"
    path.write_text(yaml.safe_dump({"agents": agents}))
    return path


def server_env(folder: Path, **extra: str) -> dict[str, str]:
    secretish = ("_API_KEY", "_TOKEN", "_KEY")
    env = {k: v for k, v in os.environ.items() if not k.endswith(secretish)}
    env.pop("MASSGEN_LOG_BASE_DIR", None)
    (folder / "home").mkdir(exist_ok=True)
    env.update(HOME=str(folder / "home"), PYTHONPATH=str(ROOT), **extra)
    return env


@asynccontextmanager
async def session(folder: Path, *args: str, **env: str) -> AsyncIterator[ClientSession]:
    """An initialized client session with `python -m massgen mcp ARGS` run in `folder`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "massgen", "mcp", *args],
        cwd=folder,
        env=server_env(folder, **env),
    )
    with (folder / "server_stderr.txt").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client
