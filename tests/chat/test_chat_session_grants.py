""" "Allow for this session" in a chat lasts the chat session: a later turn (whose run has
a new engine) does not ask again; `/clear` starts a session without grants."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_chat import chat_lines, make_chat

from massgen.permissions.approval import ApprovalRequest, Choice, Operator
from massgen.permissions.ledger import read
from massgen.testing import FakeProvider, Reply, cooperative_agent

COMMAND = "touch made_by_agent.txt"


class Person:
    """Answers "for this session" first, then "deny"; remembers what it was asked."""

    operator: Operator = "human"

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Choice:
        self.asked.append(request)
        return Choice.SESSION if len(self.asked) == 1 else Choice.DENY


def runs_the_command(request: dict) -> Reply:
    """Every turn: run the command once before answering."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    tried = any(m["role"] == "tool" for m in request["messages"])
    if "new_answer" in offered and "execute_command" in offered and not tried:
        return Reply(tool_calls=[("execute_command", {"command": COMMAND})])
    return cooperative_agent(request) if offered else Reply(text="Done.")


def team(folder: Path, base_url: str) -> Path:
    backend = {"type": "chatcompletion", "base_url": base_url, "api_key": "k", "model": "m",
               "cwd": "ws", "enable_mcp_command_line": True}  # fmt: skip
    path = folder / "team.yaml"
    config = {"agents": [{"id": "solo", "backend": backend}],
              "orchestrator": {"max_new_answers_per_agent": 1}}  # fmt: skip
    path.write_text(yaml.safe_dump(config))
    return path


def command_records(folder: Path) -> list[dict]:
    ledgers = sorted(folder.rglob("permissions.jsonl"), key=lambda p: p.stat().st_mtime_ns)
    return [r for ledger in ledgers for r in read(ledger) if r["tool"] == "execute_command"]


def test_a_session_grant_lasts_the_chat_and_clear_ends_it(tmp_path, monkeypatch):
    approver = Person()
    monkeypatch.setattr("massgen.chat.approver_for", lambda view: approver)
    with FakeProvider(runs_the_command) as fake:
        chat = make_chat(team(tmp_path, fake.base_url))
        chat_lines(chat, ["Mark it.", "Mark it again.", "/clear", "And once more.", "/quit"])
    assert len(approver.asked) == 2  # turn 1, and the first turn after /clear; never turn 2
    first, second, third = command_records(tmp_path)
    assert (first["decision"], first["operator"], first["choice"]) == ("allow", "human", "session")
    assert (second["decision"], second["rule"]) == ("allow", "session grant")
    assert (third["decision"], third["operator"]) == ("deny", "human")
