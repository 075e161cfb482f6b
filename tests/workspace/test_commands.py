"""`execute_command`: the tool over the runner, its config, its effects, its hook."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from process_checks import none_running

from massgen.config import config_from_dict
from massgen.coordination.tool_round import ToolBounds, run_round
from massgen.core.effects import Run
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.sandbox import NoSandbox, Unconfined, select_sandbox
from massgen.runs.toolboxes import open_tools
from massgen.workspace.commands import CommandPolicy, CommandToolbox, command_toolbox
from massgen.workspace.runner import Limits

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")


def call(command: str | None = None, **extra: Any) -> ToolCall:
    arguments = {} if command is None else {"command": command}
    return ToolCall("c1", "execute_command", json.dumps({**arguments, **extra}))


def ctx(workspace: Path | None) -> ToolContext:
    return ToolContext(agent="a", workspace=workspace)


# The tool's own behaviour (output, timeouts, refusals) under the sandbox this machine has;
# where it has none, bare, so these still run (confinement: tests/permissions/).
SANDBOX = select_sandbox("auto")
NO_SANDBOX = isinstance(SANDBOX, NoSandbox)


def box(policy: CommandPolicy | None = None, timeout: float = 5) -> CommandToolbox:
    sandbox = Unconfined() if isinstance(SANDBOX, NoSandbox) else SANDBOX
    return CommandToolbox(Limits(timeout), policy, env={"PATH": "/usr/bin:/bin"}, sandbox=sandbox)


def config(backend: dict[str, Any], **orchestrator: Any) -> Any:
    agent = {"id": "a", "backend": {"type": "chatcompletion", "model": "m", **backend}}
    data: dict[str, Any] = {"agents": [agent]}
    if orchestrator:
        data["orchestrator"] = orchestrator
    return config_from_dict(data, source="c.yaml", env={})


# ---------------------------------------------------------------- calls


async def test_a_command_runs_in_the_workspace(tmp_path):
    (tmp_path / "hello.txt").write_text("hi\n")
    result = await box().call(call("cat hello.txt; exit 2"), ctx(tmp_path))
    assert not result.is_error
    assert result.content.startswith("exit code 2 (")
    assert result.content.endswith("\nhi\n")


async def test_without_a_workspace_it_refuses_and_runs_nothing(tmp_path):
    result = await box().call(call(f"touch {tmp_path}/ran"), ctx(None))
    assert result.is_error
    assert result.content == "Error: this agent has no workspace, so it cannot run commands."
    assert not (tmp_path / "ran").exists()


async def test_a_timeout_is_an_error_with_the_output_so_far(tmp_path):
    result = await box().call(call("echo partial; sleep 10", timeout_seconds=0.3), ctx(tmp_path))
    assert result.is_error
    assert result.content == (
        "Error: timed out after 0.3s; the command and everything it started were stopped. "
        "Output so far:\npartial\n"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{not json", "Error: the arguments are not valid JSON"),
        ("[]", "Error: the arguments must be a JSON object."),
        ('{"command": ""}', "Error: `command` must be a non-empty string."),
        ('{"command": "true", "timeout_seconds": 0}', "Error: `timeout_seconds` must be a"),
        ('{"command": "true", "timeout_seconds": "5"}', "Error: `timeout_seconds` must be a"),
    ],
)
async def test_malformed_arguments_are_a_clear_error(tmp_path, arguments, message):
    result = await box().call(ToolCall("c1", "execute_command", arguments), ctx(tmp_path))
    assert result.is_error
    assert result.content.startswith(message)


async def test_a_blocked_command_is_refused_without_running(tmp_path):
    policy = CommandPolicy(blocked=(r"\brm\b",))
    result = await box(policy).call(call("touch ran && rm -f x"), ctx(tmp_path))
    assert result.content == (r"Error: the command matches the blocked pattern `\brm\b`; not run.")
    assert not (tmp_path / "ran").exists()


async def test_a_command_outside_the_allow_list_is_refused_without_running(tmp_path):
    policy = CommandPolicy(allowed=("python.*", "echo "))
    refused = await box(policy).call(call("touch ran"), ctx(tmp_path))
    assert refused.content == (
        "Error: the command does not start with an allowed pattern (`python.*`, `echo `); not run."
    )
    assert not (tmp_path / "ran").exists()
    allowed = await box(policy).call(call("echo ok"), ctx(tmp_path))
    assert allowed.content.endswith("\nok\n")


def test_blocked_wins_over_allowed():
    policy = CommandPolicy(allowed=("echo",), blocked=("secret",))
    assert policy.refusal("echo secret") is not None
    assert policy.refusal("echo fine") is None


# ---------------------------------------------------------------- effects


def test_effects_name_the_shell_and_the_workspace(tmp_path):
    assert box().effects(call("ls -la"), ctx(tmp_path)) == (
        Run(("/bin/sh", "-c", "ls -la"), tmp_path),
    )


def test_effects_of_a_call_that_cannot_run_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="no workspace"):
        box().effects(call("ls"), ctx(None))
    with pytest.raises(ValueError, match="non-empty string"):
        box().effects(call(), ctx(tmp_path))


# ---------------------------------------------------------------- config


def test_the_predecessors_keys_load():
    backend = (
        config(
            {
                "enable_mcp_command_line": True,
                "command_line_execution_mode": "local",
                "command_line_allowed_commands": ["python.*", "pytest.*"],
                "command_line_blocked_commands": ["rm.*"],
            }
        )
        .agents[0]
        .backend
    )
    assert backend.command_line.enabled
    assert backend.command_line.allowed_commands == ("python.*", "pytest.*")
    assert backend.command_line.blocked_commands == ("rm.*",)


def test_a_bad_regex_names_the_key_and_the_fix():
    with pytest.raises(ConfigError) as caught:
        config({"command_line_blocked_commands": ["rm.*", "python("]})
    assert str(caught.value) == (
        "c.yaml: agents[0].backend.command_line_blocked_commands[1]: `python(` is not a valid "
        "regular expression (missing ), unterminated subpattern at position 6); escape a "
        r"literal special character with a backslash, e.g. `\.` or `\(`"
    )


@pytest.mark.skipif(NO_SANDBOX, reason="this machine has no OS sandbox")
async def test_a_docker_mode_command_runs_confined_to_the_workspace(tmp_path):
    """The predecessor's `command_line_execution_mode: docker`: commands run in the OS
    sandbox, never bare; a write outside the workspace fails and changes nothing."""
    cfg = config({"enable_mcp_command_line": True, "command_line_execution_mode": "docker"})
    toolbox = command_toolbox(cfg, cfg.agents[0])
    assert toolbox is not None and not isinstance(toolbox.sandbox, (Unconfined, NoSandbox))
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = await toolbox.call(call(f"touch inside && touch {outside}/escaped"), ctx(workspace))
    assert (workspace / "inside").exists()
    assert not (outside / "escaped").exists()
    assert "exit code 0" not in result.content


def test_a_command_timeout_above_the_tool_timeout_is_a_config_error():
    with pytest.raises(ConfigError) as caught:
        config({"command_line_timeout_seconds": 120}, tool_timeout_seconds=60)
    assert "agents[0].backend.command_line_timeout_seconds (120) is above " in str(caught.value)


def test_the_toolbox_timeout_is_the_lower_of_config_and_the_loops():
    loose = command_toolbox(cfg := config({"enable_mcp_command_line": True}), cfg.agents[0])
    assert isinstance(loose, CommandToolbox)
    # 60 s tool timeout, less the kill grace and a second: the command times out first.
    assert "at most 57" in json.dumps(loose.specs()[0].parameters)
    low = config({"enable_mcp_command_line": True, "command_line_timeout_seconds": 5})
    tight = command_toolbox(low, low.agents[0])
    assert tight is not None and "at most 5)" in json.dumps(tight.specs()[0].parameters)


def test_no_toolbox_unless_enabled():
    cfg = config({})
    assert command_toolbox(cfg, cfg.agents[0]) is None


@pytest.mark.skipif(NO_SANDBOX, reason="no command sandbox on this machine")
async def test_command_env_reaches_the_child_and_other_secrets_do_not(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-parent")
    cfg = config({"enable_mcp_command_line": True, "command_line_env": {"GITHUB_TOKEN": "gh"}})
    toolbox = command_toolbox(cfg, cfg.agents[0])
    assert toolbox is not None
    result = await toolbox.call(call("env"), ctx(tmp_path))
    lines = set(result.content.splitlines())
    assert "GITHUB_TOKEN=gh" in lines
    assert "sk-parent" not in result.content


async def test_an_enabled_agent_gets_the_tool_from_open_tools():
    cfg = config({"enable_mcp_command_line": True})
    async with open_tools(cfg, log_dir=None) as boxes:
        assert [spec.name for spec in boxes["a"].specs()] == ["execute_command"]
    async with open_tools(config({}), log_dir=None) as boxes:
        assert dict(boxes) == {}


async def test_the_loops_tool_timeout_kills_the_commands_group(tmp_path):
    # Found by its argument: inside the sandbox's pid namespace `$!` is not the host's pid.
    command = f"sleep 30.{tmp_path.stat().st_ino} & touch {tmp_path}/started; wait"
    bounds = ToolBounds(timeout_seconds=0.5)
    (result,) = await run_round(box(timeout=30), [call(command)], ctx(tmp_path), bounds, [].append)
    assert result.content == "Error: `execute_command` timed out after 0.5s."
    assert (tmp_path / "started").exists()
    assert await none_running(f"sleep 30.{tmp_path.stat().st_ino}")
