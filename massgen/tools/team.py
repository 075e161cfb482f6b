"""The toolboxes of a team, opened once for a run (or a whole chat session).

Without `mcp_servers` in the config this imports nothing beyond the seam, so configs
that use no tools behave, and start, as before.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

from massgen.config.schema import MassgenConfig
from massgen.core.events import ToolSourceFailed
from massgen.tools.base import Toolbox


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
    failed: Callable[[ToolSourceFailed], None] | None = None,
) -> AsyncIterator[Mapping[str, Toolbox]]:
    """Agent id -> its toolbox, for the agents that have tools; everything is closed when
    the block ends. Raises ConfigError for a tool filter that matches no tool. A server
    that does not start goes to `failed` as an event, one per agent that lost it (without
    `failed`, to `warn`)."""
    if not any(agent.backend.mcp_servers for agent in config.agents):
        yield {}
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
        yield boxes
