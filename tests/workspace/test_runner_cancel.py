"""A command cancelled while it is still being started (asyncio connecting its pipes)
leaves nothing running: not its leader, nor what the leader had already started."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from process_checks import alive

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
