"""The chat tests' teams with workspaces, and which requests belong to which turn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from teams import member
from test_chat import chat_lines, make_chat

from massgen.chat import Chat
from massgen.testing import FakeProvider
from massgen.testing.policy import Policy


def workspace_team(
    folder: Path,
    base_url: str,
    models: dict[str, str],
    orchestrator: dict[str, Any] | None = None,
    cwd: str = "ws_{id}",
) -> Path:
    """team.yaml in `folder`: an agent per `models` entry (id -> model) on the fake at
    `base_url`, each working in its `cwd` (`{id}` is the agent's id)."""
    agents = [
        member(agent, base_url, model, cwd=cwd.format(id=agent)) for agent, model in models.items()
    ]
    config: dict[str, Any] = {"agents": agents}
    if orchestrator is not None:
        config["orchestrator"] = orchestrator
    path = folder / "team.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def question_of(request: dict[str, Any]) -> str:
    """The chat turn's question a request of the fake is about."""
    user = "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")
    return user.split("<ORIGINAL MESSAGE>\n")[-1].split("\n")[0]


def asking(requests: list[dict[str, Any]], question: str) -> list[dict[str, Any]]:
    """The requests of the turn that asked `question`, in order."""
    return [body for body in requests if question_of(body) == question]


def chat_through(
    policy: Policy, team: Callable[[str], Path], lines: list[str]
) -> tuple[Chat, list[dict[str, Any]]]:
    """A chat of `lines` (the last one `/quit`) with the team `team(base_url)` on a fake
    that answers with `policy`: the chat, and every request the fake was sent."""
    with FakeProvider(policy) as fake:
        chat = make_chat(team(fake.base_url))
        chat_lines(chat, lines)
        return chat, fake.requests
