"""The command runner: bounds, the whole process group killed, a scrubbed environment."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
from process_checks import gone

from massgen.workspace.runner import Limits, command_environment, run_command

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")

ENV = dict(os.environ)


def sh(command: str) -> tuple[str, ...]:
    return ("/bin/sh", "-c", command)


async def test_a_command_returns_its_exit_code_and_interleaved_output(tmp_path):
    finished = await run_command(
        sh("echo out; echo err >&2; echo again; exit 3"), tmp_path, Limits(5), ENV
    )
    assert (finished.exit_code, finished.timed_out, finished.cut_bytes) == (3, False, 0)
    assert finished.output == "out\nerr\nagain\n"


async def test_it_runs_in_the_given_directory(tmp_path):
    finished = await run_command(sh("pwd"), tmp_path, Limits(5), ENV)
    assert Path(finished.output.strip()).resolve() == tmp_path.resolve()


async def test_a_timeout_kills_the_backgrounded_grandchild_too(tmp_path):
    pid_file = tmp_path / "pid"
    command = f"sleep 30 & echo $! > {pid_file}; echo started; wait"
    started = time.monotonic()
    finished = await run_command(sh(command), tmp_path, Limits(0.5, kill_grace_seconds=0.2), ENV)
    assert finished.timed_out
    assert finished.output == "started\n"
    assert time.monotonic() - started < 3
    assert await gone(int(pid_file.read_text()))


async def test_a_process_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    command = "trap '' TERM; echo ready; while :; do sleep 0.05; done"
    finished = await run_command(sh(command), tmp_path, Limits(0.3, kill_grace_seconds=0.2), ENV)
    assert finished.timed_out
    assert finished.exit_code == -9


async def test_a_straggler_left_behind_by_a_finished_command_is_killed(tmp_path):
    pid_file = tmp_path / "pid"
    finished = await run_command(
        sh(f"sleep 30 > /dev/null 2>&1 & echo $! > {pid_file}"), tmp_path, Limits(5), ENV
    )
    assert (finished.exit_code, finished.timed_out) == (0, False)
    assert await gone(int(pid_file.read_text()))


async def test_cancelling_the_call_kills_the_whole_group(tmp_path):
    pid_file = tmp_path / "pid"
    command = f"sleep 30 & echo $! > {pid_file}; wait"
    task = asyncio.create_task(run_command(sh(command), tmp_path, Limits(30), ENV))
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(int(pid_file.read_text()))


async def test_output_is_capped_with_a_note_and_head_and_tail_kept(tmp_path):
    # 2 MB of output through a 1,000-byte bound.
    command = "echo FIRST; head -c 2000000 /dev/zero | tr '\\0' x; echo; echo LAST"
    finished = await run_command(sh(command), tmp_path, Limits(10, max_output_bytes=1000), ENV)
    total = len("FIRST\n") + 2_000_000 + len("\nLAST\n")
    assert finished.cut_bytes == total - 1000
    assert finished.output.startswith("FIRST\nxxx")
    assert finished.output.endswith("xxx\nLAST\n")
    assert (
        f"[output cut: {total:,} bytes in all; {total - 1000:,} bytes from the middle left "
        "out; the first 500 and last 500 are shown]"
    ) in finished.output


def test_lowering_the_timeout_never_raises_it():
    limits = Limits(10)
    assert limits.lowered(None).timeout_seconds == 10
    assert limits.lowered(3).timeout_seconds == 3
    assert limits.lowered(600).timeout_seconds == 10


async def test_a_missing_directory_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        await run_command(sh("true"), tmp_path / "nope", Limits(5), ENV)


# ---------------------------------------------------------------- environment

SECRETS = {
    "OPENAI_API_KEY": "sk-1",
    "GEMINI_API_KEY": "g-1",
    "NGC_API_KEY": "n-1",
    "GITHUB_TOKEN": "gh-1",
    "my_secret_thing": "s-1",
    "DB_PASSWORD": "p-1",
    "AWS_SECRET_ACCESS_KEY": "a-1",
    "HF_Token": "h-1",
    # Names no "secret-looking" pattern catches (issue #26): only an allowlist keeps them out.
    "GH_PAT": "canary-gh-pat",
    "MY_DB_URL": "postgres://u:canary-pw@db/x",
    "STRIPE_KEY": "canary-stripe",
}


async def test_the_child_sees_no_secrets(tmp_path):
    base = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "LC_ALL": "C", **SECRETS}
    finished = await run_command(sh("env"), tmp_path, Limits(5), command_environment(base))
    names = {line.split("=", 1)[0] for line in finished.output.splitlines()}
    assert {"PATH", "LANG", "LC_ALL"} <= names
    assert not names & set(SECRETS)
    assert "canary" not in finished.output
    assert not any(value in finished.output for value in SECRETS.values())


async def test_a_variable_passed_explicitly_reaches_the_child(tmp_path):
    base = {"PATH": os.environ["PATH"], **SECRETS}
    env = command_environment(base, {"GITHUB_TOKEN": "given"})
    finished = await run_command(sh("env"), tmp_path, Limits(5), env)
    lines = set(finished.output.splitlines())
    assert "GITHUB_TOKEN=given" in lines
    assert "OPENAI_API_KEY=sk-1" not in lines
