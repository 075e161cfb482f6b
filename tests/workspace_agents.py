"""What the workspace tests (and others) share: agents with workspaces on the fake provider, and a
policy whose final presenter writes one file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from massgen.testing.policy import Reply, cooperative_agent


def workspace_agents(base_url: str, ids: tuple[str, ...], model: str = "m") -> list[dict[str, Any]]:
    """One chatcompletion agent per id, each with its own workspace `ws<n>`; `model` may
    hold `{n}` to tell the agents apart."""
    return [
        {
            "id": agent,
            "backend": {
                "type": "chatcompletion",
                "base_url": base_url,
                "api_key": "k",
                "model": model.format(n=n),
                "cwd": f"ws{n}",
            },
        }
        for n, agent in enumerate(ids)
    ]


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
