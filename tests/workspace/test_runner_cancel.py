"""A command cancelled while it is still being started (asyncio connecting its pipes)
leaves nothing running: not its leader, nor what the leader had already started."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from process_checks import alive, gone

from massgen.workspace.runner import Limits, run_command


@pytest.mark.parametrize("ticks", range(6))
async def test_a_cancel_at_any_moment_of_the_start_leaves_no_process(tmp_path, ticks):
    pid_file = tmp_path / "pid"
    command = f"sleep 30 & echo $! > {pid_file}; wait"
    task = asyncio.create_task(
        run_command(("/bin/sh", "-c", command), tmp_path, Limits(30), dict(os.environ))
    )
    for _ in range(ticks):  # the start takes a few turns of the loop
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    time.sleep(0.3)  # a background job that got as far as starting has written its pid
    text = pid_file.read_text().strip() if pid_file.exists() else ""
    if text:
        deadline = time.monotonic() + 5
        while alive(int(text)) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not alive(int(text))


async def test_a_command_cancelled_while_starting_is_a_live_group_during_its_stop(tmp_path):
    """A Ctrl-C that lands while the command starts begins its stop: SIGTERM, then the
    grace. A command that ignores SIGTERM is still running then, and a second Ctrl-C
    (`kill_live_groups`, then exit) must reach it: it is a live group from the start."""
    from massgen.workspace.runner import kill_live_groups

    pid_file = tmp_path / "pid"
    command = f"echo $$ > {pid_file}; exec sleep 60"
    limits = Limits(30, kill_grace_seconds=30)
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited across exec
    try:
        task = asyncio.create_task(
            run_command(("/bin/sh", "-c", command), tmp_path, limits, dict(os.environ))
        )
        await asyncio.sleep(0)  # it is starting
        task.cancel()
        deadline = time.monotonic() + 10
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the command never started"
            await asyncio.sleep(0.02)
        pid = int(pid_file.read_text())
        await asyncio.sleep(0.3)  # its stop has sent SIGTERM, which it ignores
        assert alive(pid) and not task.done()
        kill_live_groups()
        assert await gone(pid, within=5)
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        signal.signal(signal.SIGTERM, previous)
