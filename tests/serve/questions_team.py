"""A one-agent team with `coordination.broadcast: human`: its agent first asks the user
(`ask_others`), then answers with what it heard, so the run's answer echoes the person."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import yaml

from massgen.testing.fake_provider import Reply, cooperative_agent

QUESTION = 'Which colour should the logo be?\nIt is for <img src=x onerror="window.pwned=1">.'
HEARD = "Heard: "


def asking_agent(request: dict[str, Any]) -> Reply:
    offered = {(t.get("function") or {}).get("name") for t in request.get("tools") or []}
    messages = request.get("messages") or []
    told = next((m for m in messages if m.get("role") == "tool" and tool_result(m)), None)
    answered = f"[{request.get('model')} answer " in json.dumps(messages)
    if {"new_answer", "ask_others"} <= offered and told is None and not answered:
        return Reply(text="Asking the user. ", tool_calls=[("ask_others", {"question": QUESTION})])
    reply = cooperative_agent(request)
    heard = _heard(told) if told is not None else _heard_before(messages)
    if reply.tool_calls and reply.tool_calls[0][0] == "new_answer":
        name, arguments = reply.tool_calls[0]
        content = {key: f"{value} {HEARD}{heard}" for key, value in arguments.items()}
        return dataclasses.replace(reply, tool_calls=[(name, content)])
    if not reply.tool_calls and heard:
        return dataclasses.replace(reply, text=f"{reply.text} {HEARD}{heard}")
    return reply


def tool_result(message: dict[str, Any]) -> dict[str, Any] | None:
    """The `ask_others` result a tool message carries, or None."""
    if message.get("role") != "tool":
        return None
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    start = text.find("{")
    try:
        body = json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        return None
    return body if isinstance(body, dict) and "responses" in body else None


def _heard(told: dict[str, Any]) -> str:
    body = tool_result(told) or {}
    responses = body.get("responses") or []
    if responses:
        return str(responses[0]["answer"])
    why = (body.get("unanswered") or [{}])[0].get("why", "")
    return f"(no answer: {why})"


def _heard_before(messages: list[dict[str, Any]]) -> str:
    """What an earlier answer of this agent's said it heard (the presentation's context)."""
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        found = re.search(re.escape(HEARD) + r"(.*)", text, re.DOTALL)
        if found:
            return found.group(1).strip()
    return ""


def write_questions_team(path: Path, base_url: str, timeout: float) -> Path:
    backend = {"type": "chatcompletion", "base_url": base_url, "model": "m0"}
    coordination = {"broadcast": "human", "broadcast_timeout": timeout}
    config = {"agents": [{"id": "asker", "backend": backend}],
              "orchestrator": {"coordination": coordination}}  # fmt: skip
    path.write_text(yaml.safe_dump(config))
    return path
