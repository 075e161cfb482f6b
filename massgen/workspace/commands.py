"""`execute_command`: run a shell command in the agent's workspace, behind the tool seam.

The model passes one shell string; it runs as `/bin/sh -c <command>` (the predecessor's
tool took a shell string too, and models write pipes and `&&`). It runs in
`ctx.workspace` and nowhere else: a call without a workspace is refused.

Config, on the agent's `backend:` (the predecessor's flat keys; `command_line:` with the
same names less the prefix is the same, `enabled` for `enable_mcp_command_line`, and is
what `config/backend_groups.CommandLineConfig` gives this module):

    enable_mcp_command_line: true          # offer the tool
    command_line_allowed_commands: [...]   # regexes; the command must start with a match
    command_line_blocked_commands: [...]   # regexes; a match anywhere refuses the command
    command_line_timeout_seconds: 30       # lowers the per-call timeout (never raises it)
    command_line_env: {NAME: value}        # passed to the command on purpose (the rest of
                                           # massgen's environment is not, but PATH, LANG, ...)
    command_line_max_processes: 512        # processes of one call (RLIMIT_NPROC)
    command_line_max_memory_mb: 8192       # address space of each process (RLIMIT_AS)
    command_line_sandbox: auto             # auto | bubblewrap | landlock | none
    command_line_network: false            # let the command reach the network
    command_line_sandbox_acknowledge_unconfined: false  # `none` in a headless run

The patterns are a policy aid, not a boundary: a shell string can hide a command from a
regex (`sh -c "$(echo cm0= | base64 -d)"`). The boundary is the OS sandbox
(`permissions/sandbox.py`): each call writes only its workspace and a private tmp dir
(removed after the call), reads the system, its workspace and the context paths, and has
no network unless allowed. Where no sandbox can be had, every command is refused with a
message that says how to get one; only `command_line_sandbox: none` runs commands bare.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.core.effects import Effect, Run
from massgen.core.errors import ConfigError
from massgen.core.toolbox import Toolbox, ToolContext, ToolResult, arguments_of
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.log import logger
from massgen.permissions.sandbox import (
    DEFAULT_MAX_MEMORY_MB,
    DEFAULT_MAX_PROCESSES,
    Confinement,
    NoSandbox,
    Sandbox,
    select_sandbox,
)
from massgen.workspace.runner import (
    KILL_GRACE_SECONDS,
    Finished,
    Limits,
    command_environment,
    run_command,
)

NAME = "execute_command"
SHELL = "/bin/sh"
# The predecessor's default per-call timeout.
DEFAULT_TIMEOUT_SECONDS = 60.0
# Room within the loop's result bound for the header and the cut note (a bound the loop
# enforces anyway: undecodable bytes can grow when shown).
_HEADER_BYTES = 512


def shell_argv(command: str) -> tuple[str, ...]:
    return (SHELL, "-c", command)


class CommandPolicy:
    """Which commands may run: none blocked, and (when an allow-list is set) one allowed."""

    def __init__(self, allowed: tuple[str, ...] | None = None, blocked: tuple[str, ...] = ()):
        self._allowed = None if allowed is None else tuple(re.compile(p) for p in allowed)
        self._blocked = tuple(re.compile(p) for p in blocked)

    def refusal(self, command: str) -> str | None:
        """Why `command` may not run, or None when it may."""
        text = command.strip()
        for pattern in self._blocked:
            if pattern.search(text):
                return f"the command matches the blocked pattern `{pattern.pattern}`; not run."
        if self._allowed is not None and not any(p.match(text) for p in self._allowed):
            listed = ", ".join(f"`{p.pattern}`" for p in self._allowed)
            return f"the command does not start with an allowed pattern ({listed}); not run."
        return None


class CommandToolbox:
    """The `execute_command` tool; its effect is `Run(("/bin/sh", "-c", command), workspace)`."""

    def __init__(
        self,
        limits: Limits,
        policy: CommandPolicy | None = None,
        env: Mapping[str, str] | None = None,
        sandbox: Sandbox | NoSandbox | None = None,
        readable: tuple[Path, ...] = (),
        network: bool = False,
        bounds: Bounds | None = None,
    ) -> None:
        """`env`: the child's whole environment (default: the allowed part of this
        process's, `command_environment`).
        `sandbox`: what confines each command (default: the best one this machine has,
        else none and every command is refused). `readable`: paths a command may read
        besides the system and its workspace (the context paths). `network`: whether a
        command may use the network. `bounds`: processes and memory of one call."""
        self._limits = limits
        self._policy = policy or CommandPolicy()
        self._env = dict(command_environment(os.environ) if env is None else env)
        self.sandbox = select_sandbox("auto", network=network) if sandbox is None else sandbox
        self._readable = readable
        self._network = network
        self._bounds = bounds or Bounds()
        self._spec = _spec(limits.timeout_seconds)

    def specs(self) -> tuple[ToolSpec, ...]:
        return (self._spec,)

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """What the call asks to run, and where; whether the policy lets it is `call`'s.

        Raises:
            ValueError: malformed arguments, or no workspace to run in.
        """
        command, _ = _arguments(call.arguments)
        if ctx.workspace is None:
            raise ValueError(NO_WORKSPACE)
        return (Run(shell_argv(command), ctx.workspace),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        if call.name != NAME:
            return ToolResult.error(call, f"tool `{call.name}` is not available.")
        try:
            command, timeout = _arguments(call.arguments)
        except ValueError as error:
            return ToolResult.error(call, str(error))
        if ctx.workspace is None:
            return ToolResult.error(call, NO_WORKSPACE)
        refusal = self._policy.refusal(command)
        if refusal is not None:
            return ToolResult.error(call, refusal)
        sandbox = self.sandbox
        if isinstance(sandbox, NoSandbox):
            return ToolResult.error(call, sandbox.reason)
        limits = self._limits.lowered(timeout)
        outcome = await self._run_confined(sandbox, command, ctx.workspace, limits)
        if isinstance(outcome, str):
            return ToolResult.error(call, outcome)
        return _result(call, outcome, limits)

    async def _run_confined(
        self, sandbox: Sandbox, command: str, workspace: Path, limits: Limits
    ) -> Finished | str:
        """The command's end, or why it did not start. Its private tmp dir is made per
        call, so nothing one command leaves there reaches the next."""
        with tempfile.TemporaryDirectory(prefix="massgen-cmd-", ignore_cleanup_errors=True) as tmp:
            try:
                confinement = Confinement(
                    workspace,
                    Path(tmp),
                    self._readable,
                    self._network,
                    max_processes=self._bounds.processes,
                    max_memory_bytes=self._bounds.memory_mb * 1024 * 1024,
                )
                wrapped = sandbox.wrap(shell_argv(command), confinement)
            except (OSError, RuntimeError, ValueError) as error:  # no sandbox, no command
                return f"could not set up the sandbox ({error}); not run."
            try:
                return await run_command(
                    wrapped.argv, workspace, limits, {**self._env, **wrapped.env}
                )
            except OSError as error:
                return f"could not start the command: {error}"


NO_WORKSPACE = "this agent has no workspace, so it cannot run commands."


@dataclass(frozen=True, slots=True)
class Bounds:
    """How many processes one call may have, and how much address space each."""

    processes: int = DEFAULT_MAX_PROCESSES
    memory_mb: int = DEFAULT_MAX_MEMORY_MB


def _arguments(text: str) -> tuple[str, float | None]:
    """(command, timeout_seconds) from the call's JSON arguments.

    Raises:
        ValueError: the arguments are not what the spec asks for (the message says how).
    """
    arguments = arguments_of(text)
    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("`command` must be a non-empty string.")
    timeout = arguments.get("timeout_seconds")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise ValueError("`timeout_seconds` must be a positive number.")
    return command, None if timeout is None else float(timeout)


def _result(call: ToolCall, finished: Finished, limits: Limits) -> ToolResult:
    if finished.timed_out:
        header = (
            f"Error: timed out after {limits.timeout_seconds:g}s; the command and everything "
            f"it started were stopped. Output so far:"
        )
    else:
        header = f"exit code {finished.exit_code} ({finished.duration_s:g}s)"
    body = finished.output if finished.output else "(no output)"
    return ToolResult(
        call.id,
        f"{header}\n{body}",
        is_error=finished.timed_out,
        truncated=finished.cut_bytes > 0,
    )


def _spec(ceiling: float) -> ToolSpec:
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "A shell command (run with /bin/sh -c in your workspace).",
            },
            "timeout_seconds": {
                "type": "number",
                "description": f"Stop the command after this many seconds (at most {ceiling:g}).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    return ToolSpec(
        NAME,
        "Run a shell command in your workspace and return its exit code and output "
        "(stdout and stderr together; long output is cut in the middle). Anything the "
        "command starts is stopped when it ends.",
        parameters,
        ToolAnnotations(read_only=False, destructive=True, open_world=True),
    )


# ---------------------------------------------------------------- from the config


def command_toolbox(
    config: MassgenConfig,
    agent: AgentConfig,
    warn: Callable[[str], None] | None = None,
    *,
    headless: bool = False,
    source: str | None = None,
    single: bool = False,
) -> Toolbox | None:
    """The command tool for `agent`, or None when its backend does not enable it.

    `warn` hears, once, that commands will be refused (no sandbox) or run unsandboxed
    (`command_line_sandbox: none`); the CLI prints it (default: the log). `headless`: no
    person watches the run; `none` then needs `command_line_sandbox_acknowledge_unconfined`.

    Raises:
        ConfigError: `none` in a headless run without the acknowledgement (`source`: the
            config file, `single`: written as `agent:`, for the message).

    The timeout is the backend's `command_line_timeout_seconds` (default 60 s), never more
    than the loop's `tool_timeout_seconds` less the kill grace, so the command reports its
    own timeout, with its output, before the loop gives up on the call. A run's deadline
    cancels the call, and cancelling kills the command's process group.
    """
    settings = agent.backend.command_line
    if not settings.enabled:
        return None
    where = ("agent" if single else f"agents[{config.agents.index(agent)}]") + ".backend"
    if headless and settings.sandbox == "none":
        _check_acknowledged(settings.sandbox_acknowledge_unconfined, where, source)
    orchestrator = config.orchestrator
    loop_limit = orchestrator.tool_timeout_seconds
    ceiling = max(loop_limit - KILL_GRACE_SECONDS - 1.0, loop_limit / 2)
    wanted = settings.timeout_seconds or DEFAULT_TIMEOUT_SECONDS
    limits = Limits(
        timeout_seconds=min(wanted, ceiling),
        max_output_bytes=max(256, orchestrator.max_tool_result_bytes - _HEADER_BYTES),
    )
    policy = CommandPolicy(settings.allowed_commands, settings.blocked_commands)
    env = command_environment(os.environ, settings.env)
    network = settings.network
    sandbox = select_sandbox(settings.sandbox, network=network)
    _warn_about(sandbox, where, warn)
    readable = tuple(Path(c.path).resolve() for c in orchestrator.context_paths)
    bounds = Bounds(settings.max_processes, settings.max_memory_mb)
    return CommandToolbox(limits, policy, env, sandbox, readable, network, bounds)


def _check_acknowledged(acknowledged: bool, where: str, source: str | None) -> None:
    """Nobody watches a headless run: commands with the user's rights over every file
    must be asked for twice."""
    if acknowledged:
        return
    raise ConfigError(
        "`none` runs commands unsandboxed, with your rights over every file and the "
        "network, and nobody watches this run (--automation, serve, batch)",
        file=source,
        path=f"{where}.command_line_sandbox",
        fix=f"Use `auto` (bubblewrap or Landlock), or also set "
        f"`{where}.command_line_sandbox_acknowledge_unconfined: true`",
    )


def _warn_about(
    sandbox: Sandbox | NoSandbox, where: str, warn: Callable[[str], None] | None
) -> None:
    if isinstance(sandbox, NoSandbox):
        message = f"{where}: execute_command {sandbox.reason}"
    elif sandbox.name == "none":
        message = (
            f"{where}.command_line_sandbox is `none`: commands run UNSANDBOXED, with your "
            "rights over every file and the network (only their processes and memory are "
            "bounded)"
        )
    else:
        return
    logger.warning(message)
    if warn is not None:
        warn(message)
