"""The toolboxes of a team, opened once for a run (or a whole chat session).

Without `mcp_servers` in the config this imports nothing beyond the seam, so configs
that use no tools behave, and start, as before; `enable_mcp_command_line` adds the command
tool (`workspace/commands.py`), which needs no SDK, and `custom_tools` the user's Python
functions (`tools/python.py`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

from massgen.config.schema import MassgenConfig
from massgen.core.events import AgentWarning, ToolSourceFailed
from massgen.core.toolbox import Toolbox, Toolboxes


def warn_stderr(message: str) -> None:
    print(f"massgen: warning: {message}", file=sys.stderr)


@contextlib.asynccontextmanager
async def open_tools(
    config: MassgenConfig,
    *,
    log_dir: Path | None,
    warn: Callable[[str], None] = warn_stderr,
    source: str | None = None,
    single: bool = False,
    failed: Callable[[ToolSourceFailed | AgentWarning], None] | None = None,
    headless: bool = False,
) -> AsyncIterator[Mapping[str, Toolbox]]:
    """Agent id -> its toolbox, for the agents that have tools; everything is closed when
    the block ends. Raises ConfigError for a tool filter that matches no tool. A server
    that does not start goes to `failed` as an event, one per agent that lost it (without
    `failed`, to `warn`). `headless`: nobody watches the run (no approver), which some
    settings refuse (`command_line_sandbox: none` without its acknowledgement). A warning
    about an agent's commands (unsandboxed, or refused) goes to `warn` and, as an
    `AgentWarning`, to `failed`, so every view and the log show it."""
    told = _told(warn, failed)
    commands = joined(
        command_toolboxes(config, told, headless=headless, source=source, single=single),
        python_toolboxes(config, source, single),
        planning(config),
        media(config, source, single),
    )
    if not any(agent.backend.mcp_servers for agent in config.agents):
        yield commands
        return
    from massgen.tools.mcp import open_team

    report = None
    if failed is not None:
        sink = failed

        def report(agent: str, server: str, error: str) -> None:
            sink(ToolSourceFailed(agent=agent, source=server, error=error))

    async with open_team(
        config, log_dir=log_dir, warn=warn, source=source, single=single, report=report
    ) as boxes:
        yield joined(boxes, commands)


def _told(
    warn: Callable[[str], None], sink: Callable[[AgentWarning], None] | None
) -> Callable[[str, str], None]:
    """(agent, message) -> `warn`, and an `AgentWarning` to `sink` when there is one."""

    def told(agent: str, message: str) -> None:
        warn(message)
        if sink is not None:
            sink(AgentWarning(agent=agent, message=message))

    return told


def command_toolboxes(
    config: MassgenConfig,
    warn: Callable[[str, str], None] | None = None,
    *,
    headless: bool = False,
    source: str | None = None,
    single: bool = False,
) -> dict[str, Toolbox]:
    """Agent id -> its `execute_command` toolbox, for agents whose backend enables it;
    `warn(agent, message)` hears when commands will be refused or run unsandboxed. Raises ConfigError for
    `command_line_sandbox: none` in a headless run without its acknowledgement."""
    if not any(agent.backend.command_line.enabled for agent in config.agents):
        return {}
    from massgen.workspace.commands import command_toolbox

    boxes = {
        agent.id: command_toolbox(
            config, agent, _for(warn, agent.id), headless=headless, source=source, single=single
        )
        for agent in config.agents
    }
    return {agent: box for agent, box in boxes.items() if box is not None}


def _for(warn: Callable[[str, str], None] | None, agent: str) -> Callable[[str], None] | None:
    """`warn` as one agent's command toolbox calls it: with the message alone."""
    return None if warn is None else lambda message: warn(agent, message)


def python_toolboxes(
    config: MassgenConfig, source: str | None = None, single: bool = False
) -> dict[str, Toolbox]:
    """Agent id -> its Python function tools (`custom_tools`), importing their files.
    Raises ConfigError naming the file, the function and the key path."""
    if not any(agent.backend.custom_tools for agent in config.agents):
        return {}
    from massgen.core.errors import ConfigError
    from massgen.tools.python_files import python_toolbox

    boxes: dict[str, Toolbox] = {}
    for index, agent in enumerate(config.agents):
        at = ("agent" if single else f"agents[{index}]") + ".backend"
        try:
            box = python_toolbox(config, agent, at, reserved_names())
        except ConfigError as error:
            raise ConfigError(error.message, file=source, path=error.path, fix=error.fix) from None
        if box is not None:
            boxes[agent.id] = box
    return boxes


def reserved_names() -> frozenset[str]:
    """Names of massgen's own tools: the workflow actions, the file tools, the command
    tool, the planning tools and the skill tools."""
    from massgen.tools.planning import TOOL_NAMES as PLANNING
    from massgen.tools.skills import TOOL_NAMES as SKILLS
    from massgen.workspace.commands import NAME as COMMAND
    from massgen.workspace.files import SPECS

    return frozenset({"new_answer", "vote", COMMAND, *PLANNING, *SKILLS, *(s.name for s in SPECS)})


def planning(config: MassgenConfig) -> dict[str, Toolbox]:
    """Agent id -> its task-planning tools (`coordination.enable_agent_task_planning`)."""
    if not config.orchestrator.coordination.enable_agent_task_planning:
        return {}
    from massgen.tools.planning import planning_toolboxes

    return planning_toolboxes(config)


def media(
    config: MassgenConfig, source: str | None = None, single: bool = False
) -> dict[str, Toolbox]:
    """Agent id -> its media tools (`enable_*_generation`, `enable_multimodal_tools`)."""
    from massgen.tools.media.plan import wanted

    if not wanted(config):
        return {}
    from massgen.tools.media.toolbox import media_toolboxes

    return media_toolboxes(config, source, single)


def joined(*maps: Mapping[str, Toolbox]) -> dict[str, Toolbox]:
    """Per agent, its toolboxes from each map as one (earlier maps win a name clash)."""
    agents = dict.fromkeys(agent for boxes in maps for agent in boxes)
    both = {agent: [boxes[agent] for boxes in maps if agent in boxes] for agent in agents}
    return {agent: one[0] if len(one) == 1 else Toolboxes(one) for agent, one in both.items()}
