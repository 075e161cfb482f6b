"""What the workspace tests (and others) share: a policy whose final presenter writes one file
(the agents with workspaces are `massgen.testing.teams.workspace_agents`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from massgen.testing.policy import Reply, cooperative_agent


def presenter_writes(
    first: tuple[str, dict[str, Any]], path: Path, content: str, closing: str
) -> Callable[[dict], Reply]:
    """Each agent first makes the tool call `first`, then cooperates; the presenter writes
    `content` to `path`, then ends with `closing`."""

    def reply(request: dict) -> Reply:
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        results = [m for m in request["messages"] if m.get("role") == "tool"]
        if "new_answer" in offered and not results:
            return Reply(tool_calls=[first])
        if "new_answer" in offered or "vote" in offered:
            return cooperative_agent(request)
        if "write_file" in offered and not results:
            return Reply(tool_calls=[("write_file", {"path": str(path), "content": content})])
        return Reply(text=closing)

    return reply
