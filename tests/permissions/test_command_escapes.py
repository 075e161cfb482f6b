"""Commands cannot outlive, flood or see more than they should (issue #26, attacks 5 and 7
and the environment findings), checked on every sandbox kind this machine has.

Each test drives the real `execute_command` tool (or the real engine, with the default
headless policy) and checks the machine afterwards: the process table, the output.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import test_sandbox
from perm_helpers import decide, engine, run
from process_checks import none_running, running_with
from test_sandbox import Machine, available, config

from massgen.core.errors import ConfigError
from massgen.permissions.policy import PolicyApprover
from massgen.permissions.sandbox import NoSandbox, Unconfined, select_sandbox
from massgen.workspace.commands import Bounds, CommandToolbox, command_toolbox
from massgen.workspace.runner import Limits

machine = test_sandbox.machine  # the fixture: a home with secrets, a project, a workspace

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandboxes")

# `none` too: ending every process and the limits hold on every kind.
KINDS = [*available(), pytest.param("none", id="none")]

# Leaves the shell's process group and its session, then keeps forking (attack 5): each
# generation forks the next and exits, so its pid changes faster than a scan of /proc can
# follow, and now and then leaves a sleeper behind. Bounded in time itself, so that a
# failing test leaves nothing running for long.
FORKER = """
import os, time
if os.fork():
    os._exit(0)
os.setsid()
end, n = time.monotonic() + 20, 0
while time.monotonic() < end:
    n += 1
    if os.fork():
        os._exit(0)
    if n % 200 == 0 and os.fork() == 0:
        time.sleep(20)
        os._exit(0)
"""


FORKER_C = r"""
#include <time.h>
#include <unistd.h>
int main(void) {
    if (fork()) return 0;
    setsid();
    time_t end = time(0) + 20;
    for (long n = 1; time(0) < end; n++) {
        if (fork()) _exit(0);
        if (n % 2000 == 0 && fork() == 0) { sleep(20); _exit(0); }
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def compiled_forker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("forker")
    (folder / "forker.c").write_text(FORKER_C)
    subprocess.run([compiler, "-O2", "-o", str(folder / "forker"), str(folder / "forker.c")],
                   check=True, timeout=60)  # fmt: skip
    return folder / "forker"


def bounded_box(m: Machine, mode: str, bounds: Bounds, timeout: float = 10) -> CommandToolbox:
    sandbox = select_sandbox(mode)  # type: ignore[arg-type]
    assert not isinstance(sandbox, NoSandbox), sandbox.reason
    env = {"PATH": "/usr/bin:/bin", "HOME": str(m.home)}
    return CommandToolbox(Limits(timeout), None, env, sandbox, (m.project,), False, bounds)


def kill_all(marker: str) -> None:
    for pid in running_with(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("program", ["c", "python"])
@pytest.mark.parametrize("mode", KINDS)
async def test_a_program_that_calls_setsid_and_keeps_forking_is_gone_after_the_call(
    machine: Machine, mode: str, program: str, request: pytest.FixtureRequest
) -> None:
    marker = f"forker{machine.workspace.stat().st_ino % 100000}{len(mode)}{program}"
    if program == "c":
        shutil.copy(request.getfixturevalue("compiled_forker"), machine.workspace / "forker")
        start = "./forker"
    else:
        (machine.workspace / "forker.py").write_text(FORKER)
        start = f"{sys.executable} forker.py"
    command = f"{start} {marker} & sleep 1; echo started"
    try:
        result = await machine.run(machine.box(mode), command)
        assert result.content.startswith("exit code 0"), result.content
        assert result.content.endswith("started\n")
        assert await none_running(marker), f"still running: {running_with(marker)}"
    finally:
        kill_all(marker)


@pytest.mark.parametrize("mode", KINDS)
async def test_a_process_takes_no_more_memory_than_the_limit(machine: Machine, mode: str) -> None:
    box = bounded_box(machine, mode, Bounds(memory_mb=256))
    grab = f"{sys.executable} -c 'bytearray(1024 ** 3); print(\"got it\")'"
    result = await machine.run(box, f"{grab}; echo after")
    assert "MemoryError" in result.content, result.content
    assert "got it" not in result.content
    assert result.content.endswith("after\n")


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root is exempt from RLIMIT_NPROC (the kernel's rule)"
)
@pytest.mark.parametrize("mode", KINDS)
async def test_a_fork_bomb_run_anyway_is_bounded_by_the_process_limit(
    machine: Machine, mode: str
) -> None:
    marker = f"bomb{machine.workspace.stat().st_ino % 100000}{len(mode)}"
    command = f"f(){{ sleep 30.{marker} & f & f; }}; f"  # past the engine, straight to the tool
    try:
        result = await machine.run(bounded_box(machine, mode, Bounds(processes=32), 3), command)
        assert "fork" in result.content.lower() or "resource" in result.content.lower()
        assert await none_running(f".{marker}")
    finally:
        kill_all(f".{marker}")


@pytest.mark.parametrize("mode", KINDS)
async def test_variables_not_passed_on_purpose_do_not_reach_a_command(
    machine: Machine, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Names that no "looks secret" pattern catches (the lesser findings).
    monkeypatch.setenv("GH_PAT", "canary-gh-pat")
    monkeypatch.setenv("MY_DB_URL", "postgres://app:canary-db-password@db/app")
    monkeypatch.setenv("STRIPE_KEY", "canary-stripe")
    monkeypatch.setenv("LANG", "C.UTF-8")
    cfg = config({"command_line_sandbox": mode, "command_line_env": {"GIVEN": "on-purpose"}})
    box = command_toolbox(cfg, cfg.agents[0])
    assert isinstance(box, CommandToolbox)
    result = await machine.run(box, "env")
    assert result.content.startswith("exit code 0"), result.content
    assert "canary" not in result.content
    assert "GIVEN=on-purpose" in result.content and "LANG=C.UTF-8" in result.content


# ---------------------------------------------------------------- the engine's rules

HIDDEN_RUNNERS = [
    "git -c alias.x='!rm -rf ~/victim; cat ~/.ssh/id_rsa' x",
    "git -c core.pager='cat ~/.ssh/id_rsa' log",
    "git config alias.x '!id' && git x",
    "tar --to-command='sh -c \"cat ~/.ssh/id_rsa\"' -xf a.tar",
    "tar -I 'sh -c id' -xf a.tar",
    "sed e list.txt",
    "sed -e '1e cat ~/.ssh/id_rsa' notes.txt",
    "sed 's/.*/id/e' notes.txt",
    "python3 - <<'EOF'\nimport os\nos.system('id')\nEOF\n",
    'echo \'require("child_process").execSync("id")\' | node',
    "bash -s <<'EOF'\nid\nEOF\n",
    "vim -c '!id' -c q notes.txt",
    "find . -exec sh -c id \\;",
    "ls | xargs rm",
    "awk 'BEGIN { system(\"id\") }'",
    "perl -e 'system(\"id\")'",
    'node -e \'require("child_process").execSync("id")\'',
    "GIT_SSH_COMMAND='sh -c id' git fetch",
]


@pytest.mark.parametrize("command", HIDDEN_RUNNERS)
async def test_commands_that_run_hidden_commands_are_high_risk_and_refused_headless(
    tmp_path: Any, command: str
) -> None:
    e = engine(tmp_path, approver=PolicyApprover("risk-based"))  # the headless default
    decision = await decide(e, tmp_path, run(tmp_path, command))
    assert not decision.allowed, decision
    assert decision.risk == "high", decision


@pytest.mark.parametrize(
    "command",
    ["git status", "git log -p", "git -c user.name=me commit -m m", "sed -n 2p f.txt",
     "sed 's/e/x/g' f.txt", "tar -xzf a.tgz", "python3 script.py"],
)  # fmt: skip
async def test_the_same_tools_used_plainly_are_not(tmp_path: Any, command: str) -> None:
    e = engine(tmp_path, approver=PolicyApprover("risk-based"))
    decision = await decide(e, tmp_path, run(tmp_path, command))
    assert decision.allowed, decision


# ---------------------------------------------------------------- `none`, headless


def test_sandbox_none_in_a_headless_run_without_the_acknowledgement_is_a_config_error() -> None:
    cfg = config({"command_line_sandbox": "none"})
    with pytest.raises(ConfigError) as caught:
        command_toolbox(cfg, cfg.agents[0], headless=True, source="team.yaml")
    text = caught.value.render()
    assert text.startswith("team.yaml: agents[0].backend.command_line_sandbox: ")
    assert "agents[0].backend.command_line_sandbox_acknowledge_unconfined: true" in text


def test_with_the_acknowledgement_it_runs_and_still_warns() -> None:
    warnings: list[str] = []
    cfg = config(
        {"command_line_sandbox": "none", "command_line_sandbox_acknowledge_unconfined": True}
    )
    box = command_toolbox(cfg, cfg.agents[0], warnings.append, headless=True)
    assert isinstance(box, CommandToolbox) and box.sandbox.name == "none"
    assert len(warnings) == 1 and "UNSANDBOXED" in warnings[0]


def test_massgen_automation_with_sandbox_none_stops_with_one_line_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from massgen.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "team.yaml").write_text(
        "agent:\n  id: a\n  backend:\n    type: chatcompletion\n"
        "    base_url: http://127.0.0.1:9/v1\n    api_key: k\n    model: m\n    cwd: ws\n"
        "    enable_mcp_command_line: true\n    command_line_sandbox: none\n"
    )
    code = main(["--automation", "--config", "team.yaml", "Tidy up."])
    err = capsys.readouterr().err
    assert code != 0
    assert "team.yaml: agent.backend.command_line_sandbox: `none` runs commands" in err
    assert "agent.backend.command_line_sandbox_acknowledge_unconfined: true" in err
    assert "Traceback" not in err


async def test_without_util_linux_none_falls_back_to_the_launcher_and_still_holds(
    machine: Machine, tmp_path: Path
) -> None:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    sandbox = select_sandbox("none", search_path=str(empty))  # no unshare, no prlimit
    assert isinstance(sandbox, Unconfined) and sandbox.unshare == ()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(machine.home)}
    box = CommandToolbox(Limits(10), None, env, sandbox, (), False, Bounds(memory_mb=256))
    marker = f"{machine.workspace.stat().st_ino % 100000}77"
    grab = f"{sys.executable} -c 'bytearray(1024 ** 3)'"
    try:
        result = await machine.run(box, f"setsid sleep 46.{marker} & echo $$; {grab}")
        assert result.content.split("\n")[1] == "1"  # the first process of its namespace
        assert "MemoryError" in result.content
        assert await none_running(f".{marker}")
    finally:
        kill_all(f".{marker}")
