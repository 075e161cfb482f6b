"""Ctrl-C (SIGINT) and SIGTERM in each phase of a run, through the CLI in a subprocess:
exit 4, the journal intact, how to resume printed, no child process left behind."""

from __future__ import annotations

import secrets
import signal
import time
from pathlib import Path

import pytest
import yaml
from process_checks import alive
from test_resume import automation, journal_kinds, massgen, wait_for

from massgen.record.journal import read_journal
from massgen.testing.fake_provider import FakeProvider, Fault, Reply, cooperative_agent

STALL = Reply(fault=Fault(stall_seconds=60))


def offered(request) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def stall_first_answers(request) -> Reply:
    return STALL


def stall_votes(request) -> Reply:
    reply = cooperative_agent(request)
    voting = any(name == "vote" for name, _ in reply.tool_calls)
    return STALL if voting else reply


def stall_presentation(request) -> Reply:
    return STALL if not offered(request) else cooperative_agent(request)


def run_a_command(pid_file: Path, command: str):
    def policy(request) -> Reply:
        if request["model"] != "m-a":
            return STALL
        results = [m for m in request["messages"] if m.get("role") == "tool"]
        if not results:
            return Reply(tool_calls=[("execute_command", {"command": command})])
        return cooperative_agent(request)

    return policy


def sleeper(pid_file: Path, trap: bool = False) -> str:
    """A command that backgrounds a `sleep` whose duration is unique to this test (so the
    test finds it among the host's processes: inside the command's pid namespace, `$!` is
    not a host pid) and writes that duration once it started."""
    ignore = "trap '' TERM; " if trap else ""
    token = f"60.{secrets.randbelow(10**6):06d}"
    return f"{ignore}sleep {token} & echo {token} > {pid_file}; wait"


def host_pid(pid_file: Path) -> int | None:
    """The host pid of the sleep the command started (see `sleeper`)."""
    token = pid_file.read_text().strip() if pid_file.exists() else ""
    if not token:
        return None
    wanted = f"sleep\0{token}\0".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == wanted:
                    return int(entry.name)
            except OSError:
                continue
    return None


def team(tmp_path: Path, base_url: str, commands: bool = False) -> Path:
    # Unsandboxed, on purpose (acknowledged, as a headless run requires): what a sandbox
    # lets a command do is tests/permissions/test_sandbox.py's business.
    tools = (
        {
            "enable_mcp_command_line": True,
            "command_line_sandbox": "none",
            "command_line_sandbox_acknowledge_unconfined": True,
        }
        if commands
        else {}
    )
    agents = [
        {
            "id": f"agent_{m}",
            "backend": {"type": "chatcompletion", "model": m, "base_url": base_url, **tools},
        }
        for m in ("m-a", "m-b", "m-c")
    ]
    if commands:
        for n, agent in enumerate(agents):
            agent["backend"]["cwd"] = f"ws{n}"
    config = {"agents": agents, "orchestrator": {"seed": 3}}
    if commands:  # the command writes its pid outside its workspace, which needs a rule
        allow = ["Command(sleep *)", "Command(echo *)", "Command(wait)", "Command(trap *)"]
        allow.append(f"Write(/{tmp_path}/sleep.pid)")
        config["permissions"] = {"rules": {"allow": allow}, "automation_default": "allow-all"}
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


PHASES = {
    "before any answer": (stall_first_answers, lambda kinds: kinds.count("agent_started") == 3),
    "while voting": (stall_votes, lambda kinds: kinds.count("agent_started") == 6),
    "final presentation": (stall_presentation, lambda kinds: "presentation_started" in kinds),
}


def start(tmp_path: Path, config: Path):
    proc = massgen(tmp_path, "--config", str(config), "--automation", "q")
    log_dir = Path(proc.stdout.readline().split(": ", 1)[1].strip())
    return proc, log_dir


def assert_ended_as_interrupted(proc, log_dir: Path, err: str) -> None:
    assert proc.returncode == 4, err
    assert f"resume with: massgen --resume {log_dir}" in err
    journal = read_journal(log_dir / "events.jsonl")  # whole: no torn line, nothing lost
    assert journal[-1].kind == "run_finished" and journal[-1].outcome.status == "interrupted"
    assert "Traceback" not in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("phase", sorted(PHASES))
def test_a_signal_in_each_phase_exits_4_with_the_journal_intact(tmp_path, phase, sig):
    policy, reached = PHASES[phase]
    with FakeProvider(policy) as fake:
        proc, log_dir = start(tmp_path, team(tmp_path, fake.base_url))
        wait_for(lambda: reached(journal_kinds(log_dir)))
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    assert_ended_as_interrupted(proc, log_dir, err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_a_tool_call_leaves_no_child_behind(tmp_path, sig):
    pid_file = tmp_path / "sleep.pid"
    with FakeProvider(run_a_command(pid_file, sleeper(pid_file))) as fake:
        config = team(tmp_path, fake.base_url, commands=True)
        proc, log_dir = start(tmp_path, config)
        wait_for(lambda: host_pid(pid_file) is not None)
        child = host_pid(pid_file)
        assert child is not None and alive(child)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    assert_ended_as_interrupted(proc, log_dir, err)
    wait_for(lambda: not alive(child), 5)  # SIGKILLed with its group: gone once scheduled


def test_a_second_ctrl_c_exits_at_once_and_kills_the_command(tmp_path):
    pid_file = tmp_path / "sleep.pid"
    # The command ignores SIGTERM, so the graceful stop waits out its kill grace.
    with FakeProvider(run_a_command(pid_file, sleeper(pid_file, trap=True))) as fake:
        config = team(tmp_path, fake.base_url, commands=True)
        proc, log_dir = start(tmp_path, config)
        wait_for(lambda: host_pid(pid_file) is not None)
        child = host_pid(pid_file)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    assert proc.returncode == 4, err
    assert took < 1.5, f"the second Ctrl-C took {took:.1f}s"
    assert "exiting now" in err and f"massgen --resume {log_dir}" in err
    assert child is not None
    wait_for(lambda: not alive(child), 5)
    read_journal(log_dir / "events.jsonl")  # readable: a valid prefix


def test_a_run_interrupted_while_voting_resumes_and_finishes(tmp_path):
    with FakeProvider(stall_votes) as fake:
        proc, log_dir = start(tmp_path, team(tmp_path, fake.base_url))
        wait_for(lambda: journal_kinds(log_dir).count("agent_started") == 6)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        fake.policy = cooperative_agent
        again = massgen(tmp_path, "--resume", str(log_dir), "--automation")
        out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert "resumed: 3 answers, 0 votes (attempt 2)" in err
    assert automation(out)["STATUS_RESULT"] == "ok"
