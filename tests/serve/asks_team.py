"""A team whose one agent first runs `touch made.txt`: a medium-risk command, so the
permission engine asks whoever answers for the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from massgen.testing.fake_provider import Reply, cooperative_agent

COMMAND = "touch made.txt"


def commanding_agent(request: dict[str, Any]) -> Reply:
    offered = {(t.get("function") or {}).get("name") for t in request.get("tools") or []}
    messages = request.get("messages") or []
    tried = any(m.get("role") == "tool" for m in messages)
    answered = f"[{request.get('model')} answer " in json.dumps(messages)
    if {"new_answer", "execute_command"} <= offered and not tried and not answered:
        return Reply(
            text="Making the file. ", tool_calls=[("execute_command", {"command": COMMAND})]
        )
    return cooperative_agent(request)


def write_asks_team(path: Path, base_url: str) -> Path:
    backend = {"type": "chatcompletion", "base_url": base_url, "model": "m0", "cwd": "ws0",
               "enable_mcp_command_line": True}  # fmt: skip
    path.write_text(yaml.safe_dump({"agents": [{"id": "maker", "backend": backend}]}))
    return path
