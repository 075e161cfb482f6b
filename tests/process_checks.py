"""Whether a process is gone: the check the kill tests (runner, commands, MCP servers) share."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead, waiting for init to reap it.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def gone(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.02)
    return not alive(pid)


def running_with(marker: str) -> list[int]:
    """The pids of processes whose command line holds `marker`: found by what they run, so
    also inside a pid namespace (a sandboxed `$!` is not the host's pid)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


async def none_running(marker: str, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while running_with(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not running_with(marker)
