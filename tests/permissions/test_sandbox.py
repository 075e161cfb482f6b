"""The OS sandbox of `execute_command`: what a real command can write, read and reach.

Each test runs real commands through the tool, under every sandbox this machine has
(bubblewrap, Landlock), and checks the machine afterwards: the files outside the
workspace, the secrets, a real loopback listener, the process table.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from process_checks import none_running

from massgen.config import config_from_dict
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext, ToolResult
from massgen.core.types import ToolCall
from massgen.permissions import landlock
from massgen.permissions.sandbox import (
    Bubblewrap,
    Landlocked,
    NoSandbox,
    Sandbox,
    select_sandbox,
)
from massgen.workspace.commands import CommandToolbox, command_toolbox
from massgen.workspace.runner import Limits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandboxes")

SECRET = "s3cret-value-never-shown"


def available() -> list[Any]:
    kinds = []
    for mode in ("bubblewrap", "landlock"):
        found = select_sandbox(mode)  # type: ignore[arg-type]
        reason = found.reason if isinstance(found, NoSandbox) else ""
        kinds.append(
            pytest.param(mode, id=mode, marks=pytest.mark.skipif(bool(reason), reason=reason))
        )
    return kinds


@dataclass
class Machine:
    """A home with secrets, a project with a `.env` and a context path, a workspace inside
    the project's `.massgen/` (where massgen puts it), and a directory outside all of it."""

    home: Path
    project: Path
    workspace: Path
    outside: Path

    def box(self, mode: str, network: bool = False, timeout: float = 10) -> CommandToolbox:
        sandbox = select_sandbox(mode, network=network)  # type: ignore[arg-type]
        assert not isinstance(sandbox, NoSandbox), sandbox.reason
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home)}
        readable = (self.project,)  # the project as a context path: `.env` inside is hidden
        return CommandToolbox(Limits(timeout), None, env, sandbox, readable, network)

    async def run(self, box: CommandToolbox, command: str, **extra: Any) -> ToolResult:
        arguments = json.dumps({"command": command, **extra})
        ctx = ToolContext(agent="a", workspace=self.workspace)
        return await box.call(ToolCall("c1", "execute_command", arguments), ctx)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    home, project, outside = tmp_path / "home", tmp_path / "project", tmp_path / "outside"
    for secret in (home / ".ssh" / "id_ed25519", home / ".config" / "massgen" / ".env"):
        secret.parent.mkdir(parents=True)
        secret.write_text(f"KEY={SECRET}\n")
    (home / "notes.txt").write_text(f"{SECRET}\n")
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('app')\n")
    (project / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    workspace = project / ".massgen" / "workspaces" / "run" / "ws"
    workspace.mkdir(parents=True)
    peer = project / ".massgen" / "workspaces" / "run" / "peer"
    peer.mkdir()
    (peer / "draft.txt").write_text(f"{SECRET}\n")  # a peer's live work, not its snapshot
    outside.mkdir()
    (outside / "kept.txt").write_text("original\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    yield Machine(home, project, workspace, outside)


KINDS = available()


# ---------------------------------------------------------------- writes


@pytest.mark.parametrize("mode", KINDS)
async def test_a_command_writes_its_workspace_and_its_private_tmp(machine, mode):
    result = await machine.run(
        machine.box(mode), 'echo made > made.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"'
    )
    assert result.content.startswith("exit code 0"), result.content
    assert result.content.endswith("\nt\n")
    assert (machine.workspace / "made.txt").read_text() == "made\n"


@pytest.mark.parametrize("mode", KINDS)
async def test_a_command_cannot_write_outside_its_workspace(machine, mode):
    out, home, parent = machine.outside, machine.home, machine.workspace.parent
    (machine.workspace / "planted").symlink_to(out / "kept.txt")  # left by an earlier call
    (machine.workspace / "door").symlink_to(out, target_is_directory=True)
    attempts = [
        f"echo x > {out}/abs.txt",  # an absolute path
        f"mkdir -p {out} && echo x > {out}/mkdir.txt",
        "echo x > ../dotdot.txt",  # `../`
        f"echo x > {machine.workspace}/../../dotdot2.txt",
        "echo x > planted",  # a symlink in the workspace that points out
        "echo x > door/through-link.txt",
        f"ln -s {out} fresh && echo x > fresh/fresh-link.txt",  # one made by the command
        f"echo x > {home}/home.txt",  # the real home ($HOME inside is the private tmp)
        f"echo x > {home}/.ssh/authorized_keys",
        f"echo x > {machine.project}/src/app.py",  # a context path: read-only
        f"rm -f {machine.project}/.env",
        "echo x > /tmp/massgen-sandbox-escape.txt",  # /tmp outside the private tmp
        "echo x > /etc/massgen-escape",
    ]
    for command in attempts:
        await machine.run(machine.box(mode), command)
    assert sorted(p.name for p in out.iterdir()) == ["kept.txt"]
    assert (out / "kept.txt").read_text() == "original\n"
    assert not (parent / "dotdot.txt").exists()
    assert not (machine.project / ".massgen" / "workspaces" / "dotdot2.txt").exists()
    assert not (home / "home.txt").exists()
    assert not (home / ".ssh" / "authorized_keys").exists()
    assert (machine.project / "src" / "app.py").read_text() == "print('app')\n"
    assert (machine.project / ".env").exists()
    assert not Path("/tmp/massgen-sandbox-escape.txt").exists()
    assert not Path("/etc/massgen-escape").exists()


# ---------------------------------------------------------------- reads


@pytest.mark.parametrize("mode", KINDS)
async def test_a_command_reads_the_system_and_its_context_paths(machine, mode):
    result = await machine.run(
        machine.box(mode), f"cat {machine.project}/src/app.py && head -c 4 /etc/passwd && ls /usr"
    )
    assert result.content.startswith("exit code 0"), result.content
    assert "print('app')" in result.content
    assert "bin" in result.content


@pytest.mark.parametrize("mode", KINDS)
async def test_a_command_cannot_read_another_processs_environment(machine, mode):
    # A process of the user's with a key in its environment, as massgen itself has.
    holder = await asyncio.create_subprocess_exec(
        "sleep", "30", env={"PATH": "/usr/bin:/bin", "MASSGEN_TEST_KEY": SECRET}
    )
    try:
        result = await machine.run(
            machine.box(mode), f"cat /proc/{holder.pid}/environ /proc/*/environ | tr '\\0' '\\n'"
        )
    finally:
        holder.kill()
        await holder.wait()
    assert SECRET not in result.content
    assert Path(f"/proc/{os.getpid()}/environ").exists()  # the check is a real one here


@pytest.mark.parametrize("mode", KINDS)
async def test_a_command_cannot_read_the_hidden_secrets(machine, mode):
    home, project = machine.home, machine.project
    paths = [
        home / ".ssh" / "id_ed25519",
        home / ".config" / "massgen" / ".env",
        home / "notes.txt",
        project / ".env",
        machine.workspace / ".." / ".." / ".." / ".." / ".env",  # `../` up to the project
        machine.workspace / ".." / "peer" / "draft.txt",
    ]
    result = await machine.run(
        machine.box(mode),
        "; ".join(f"cat {p}" for p in paths) + f"; grep -r KEY= {home} {project} /tmp",
    )
    assert SECRET not in result.content


# ---------------------------------------------------------------- network


@pytest.fixture
async def listener() -> Any:
    """A real TCP listener on a loopback port; `connections` counts who reached it."""
    connections: list[str] = []

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append("in")
        writer.close()

    server = await asyncio.start_server(accepted, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield port, connections
    server.close()
    await server.wait_closed()


def connect(port: int) -> str:
    code = (
        "import socket; socket.create_connection(('127.0.0.1', %d), timeout=3); print('connected')"
    )
    return f'{sys.executable} -I -S -c "{code % port}"'


@pytest.mark.parametrize("mode", KINDS)
async def test_without_network_a_command_cannot_reach_a_loopback_port(machine, mode, listener):
    port, connections = listener
    result = await machine.run(machine.box(mode), connect(port))
    assert "connected" not in result.content.splitlines()
    assert not result.content.startswith("exit code 0")
    assert connections == []


@pytest.mark.parametrize("mode", KINDS)
async def test_with_network_allowed_it_can(machine, mode, listener):
    port, connections = listener
    result = await machine.run(machine.box(mode, network=True), connect(port))
    assert result.content.splitlines()[-1] == "connected", result.content
    assert connections == ["in"]


def python(code: str) -> str:
    return f'{sys.executable} -I -S -c "{code}"'


@pytest.mark.parametrize("mode", KINDS)
async def test_without_network_no_udp_datagram_arrives(machine, mode):
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        server.settimeout(0.5)
        port = server.getsockname()[1]
        code = f"import socket; socket.socket(2, 2).sendto(b'leak', ('127.0.0.1', {port}))"
        await machine.run(machine.box(mode), python(code))
        with pytest.raises(TimeoutError):
            server.recv(16)


@pytest.mark.parametrize("mode", KINDS)
@pytest.mark.parametrize("network", [False, True], ids=["offline", "online"])
async def test_a_command_cannot_reach_a_unix_socket_outside(machine, mode, network, tmp_path):
    # ssh-agent and the docker socket are reached by path: a write right is not needed.
    connections: list[str] = []

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append("in")
        writer.close()

    path = tmp_path / "agent.sock"
    server = await asyncio.start_unix_server(accepted, path)
    code = f"import socket; s = socket.socket(1, 1); s.connect('{path}'); print('connected')"
    try:
        result = await machine.run(machine.box(mode, network=network), python(code))
    finally:
        server.close()
        await server.wait_closed()
    assert "connected" not in result.content.splitlines()
    assert connections == []


# ---------------------------------------------------------------- processes


@pytest.mark.parametrize("mode", KINDS)
async def test_a_timed_out_command_leaves_no_process_behind(machine, mode):
    marker = f"{machine.workspace.stat().st_ino % 100000}{len(mode)}7"
    # `setsid` leaves the runner's process group: the sandbox must still end it.
    command = f"sleep 40.{marker} & setsid sleep 41.{marker} & sleep 42.{marker}"
    result = await machine.run(machine.box(mode), command, timeout_seconds=0.5)
    assert result.is_error and "timed out after 0.5s" in result.content
    assert await none_running(f".{marker}")


@pytest.mark.parametrize("mode", KINDS)
async def test_what_a_finished_command_left_running_is_stopped(machine, mode):
    marker = f"{machine.workspace.stat().st_ino % 100000}{len(mode)}9"
    command = f"setsid sleep 45.{marker} & echo done"
    result = await machine.run(machine.box(mode), command)
    assert result.content.startswith("exit code 0") and result.content.endswith("\ndone\n")
    assert await none_running(f".{marker}")


@pytest.mark.parametrize("mode", KINDS)
async def test_a_cancelled_command_leaves_no_process_behind(machine, mode):
    marker = f"{machine.workspace.stat().st_ino % 100000}{len(mode)}8"
    started = machine.workspace / "started"
    command = f"sleep 43.{marker} & setsid sleep 44.{marker} & touch started; wait"
    task = asyncio.create_task(machine.run(machine.box(mode), command))
    while not started.exists():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await none_running(f".{marker}")


# ---------------------------------------------------------------- choosing, refusing


def config(backend: dict[str, Any]) -> Any:
    agent = {
        "id": "a",
        "backend": {"type": "chatcompletion", "model": "m", "enable_mcp_command_line": True}
        | backend,
    }
    return config_from_dict({"agents": [agent]}, source="c.yaml", env={})


async def test_without_bubblewrap_on_path_a_bubblewrap_agent_refuses_every_command(
    machine, monkeypatch
):
    monkeypatch.setenv("PATH", str(machine.outside))  # no bwrap there
    cfg = config({"command_line_sandbox": "bubblewrap"})
    box = command_toolbox(cfg, cfg.agents[0])
    assert isinstance(box, CommandToolbox)
    result = await machine.run(box, f"touch {machine.workspace}/ran")
    assert result.is_error
    assert "commands are refused: no sandbox (`bwrap` is not on PATH)" in result.content
    assert "apt-get install bubblewrap" in result.content
    assert "command_line_sandbox: none" in result.content
    assert not (machine.workspace / "ran").exists()


async def test_with_no_sandbox_at_all_auto_refuses(machine):
    sandbox = select_sandbox("auto", search_path="", landlock_abi=0)
    assert isinstance(sandbox, NoSandbox)
    assert sandbox.reason == (
        "commands are refused: no sandbox (`bwrap` is not on PATH; the kernel has no Landlock "
        "(Linux 5.13 or later, enabled)); install bubblewrap (`apt-get install bubblewrap`), run "
        "on a Linux kernel with Landlock, or set `command_line_sandbox: none` on the agent's "
        "backend to run commands unsandboxed (at your own risk)."
    )
    box = CommandToolbox(Limits(5), env={"PATH": "/usr/bin:/bin"}, sandbox=sandbox)
    result = await machine.run(box, "touch ran")
    assert result.content == f"Error: {sandbox.reason}"
    assert not (machine.workspace / "ran").exists()


def test_landlock_that_cannot_block_the_network_is_refused_unless_network_is_allowed():
    refused = select_sandbox("landlock", landlock_abi=3)
    assert isinstance(refused, NoSandbox)
    assert "cannot block the network" in refused.reason
    assert isinstance(select_sandbox("landlock", network=True, landlock_abi=3), Landlocked)


def test_auto_prefers_bubblewrap_then_landlock(machine):
    if not isinstance(select_sandbox("bubblewrap"), Bubblewrap):
        pytest.skip("no working bwrap")
    assert isinstance(select_sandbox("auto"), Bubblewrap)
    assert isinstance(select_sandbox("auto", search_path="", landlock_abi=7), Landlocked)


async def test_none_runs_unsandboxed_only_when_asked_and_says_so_loudly(machine):
    warnings: list[str] = []
    cfg = config({"command_line_sandbox": "none"})
    box = command_toolbox(cfg, cfg.agents[0], warnings.append)
    assert isinstance(box, CommandToolbox)
    sandbox: Sandbox | NoSandbox = box.sandbox
    assert sandbox.name == "none"
    assert warnings == [
        "agents[0].backend.command_line_sandbox is `none`: commands run UNSANDBOXED, with "
        "your rights over every file and the network (only their processes and memory are "
        "bounded)"
    ]
    await machine.run(box, f"echo bare > {machine.outside}/bare.txt")
    assert (machine.outside / "bare.txt").read_text() == "bare\n"


def test_the_config_keys_load_and_default_to_a_sandbox_without_network():
    backend = config({}).agents[0].backend
    assert (backend.command_line.sandbox, backend.command_line.network) == ("auto", False)
    chosen = config({"command_line_sandbox": "landlock", "command_line_network": True})
    assert chosen.agents[0].backend.command_line.sandbox == "landlock"
    with pytest.raises(ConfigError) as caught:
        config({"command_line_sandbox": "docker"})
    assert "agents[0].backend.command_line_sandbox" in str(caught.value)


def test_docker_execution_is_the_sandbox_never_bare():
    backend = config({"command_line_execution_mode": "docker"}).agents[0].backend
    assert (backend.command_line.execution_mode, backend.command_line.sandbox) == ("local", "auto")
    assert backend.command_line.network is False


def test_the_landlock_abi_is_read_from_the_kernel():
    assert landlock.abi_version() >= 0


def test_the_readmes_commands_example_loads():
    import yaml

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("**Commands.**", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    cfg = config_from_dict(yaml.safe_load(block), source="README.md", env={"GITHUB_TOKEN": "t"})
    backend = cfg.agents[0].backend
    assert (backend.command_line.sandbox, backend.command_line.network) == ("auto", False)
    assert backend.command_line.env == {"GITHUB_TOKEN": "t"}


async def test_the_configs_context_paths_are_readable_and_nothing_else_of_the_project(machine):
    if isinstance(select_sandbox("auto"), NoSandbox):
        pytest.skip("no command sandbox on this machine")
    backend = {"type": "chatcompletion", "model": "m", "cwd": "ws", "enable_mcp_command_line": True}
    data = {
        "agents": [{"id": "a", "backend": backend}],
        "orchestrator": {"context_paths": [{"path": "src"}]},
    }
    cfg = config_from_dict(data, source="c.yaml", env={})
    box = command_toolbox(cfg, cfg.agents[0])
    assert isinstance(box, CommandToolbox)
    result = await machine.run(box, f"cat {machine.project}/src/app.py; cat {machine.project}/.env")
    assert "print('app')" in result.content
    assert SECRET not in result.content


async def test_a_sandbox_that_fails_to_set_up_means_no_command(machine):
    class Broken:
        name = "broken"

        def wrap(self, argv: Any, confinement: Any) -> Any:
            raise OSError("no such namespace")

    box = CommandToolbox(Limits(5), env={"PATH": "/usr/bin:/bin"}, sandbox=Broken())
    result = await machine.run(box, "touch ran")
    assert result.content == "Error: could not set up the sandbox (no such namespace); not run."
    assert not (machine.workspace / "ran").exists()
