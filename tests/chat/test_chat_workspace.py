"""Multi-turn workspaces: turn n+1 reads turn n's final workspace under `previous/`,
read-only, and a chat resumed with `--continue` in a new process finds it again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from chat_team import asking, chat_through, question_of, workspace_team
from test_chat import chat_lines, make_chat

from massgen.sessions import Session
from massgen.testing import FakeProvider, Reply, cooperative_agent

REPO = Path(__file__).resolve().parents[2]


def planner(request: dict) -> Reply:
    """Turn "Plan.": the (only, so winning) agent writes plan.txt before answering. Any
    later turn: before answering, read previous/plan.txt, then try to overwrite it."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    if question_of(request) == "Plan.":
        if "new_answer" in offered and not results:
            return Reply(tool_calls=[("write_file", {"path": "plan.txt", "content": "step 1"})])
        return cooperative_agent(request) if offered else Reply(text="Planned.")
    if "new_answer" in offered and not results:
        return Reply(tool_calls=[("read_file", {"path": "previous/plan.txt"})])
    if "new_answer" in offered and len(results) == 1:
        return Reply(tool_calls=[("write_file", {"path": "previous/plan.txt", "content": "x"})])
    return cooperative_agent(request) if offered else Reply(text="Done.")


def _team(folder: Path, base_url: str) -> Path:
    return workspace_team(folder, base_url, {"solo": "m"}, cwd="ws")


def _tool_results(requests: list[dict], question: str) -> list[str]:
    found: list[str] = []
    for body in asking(requests, question):
        found = [m["content"] for m in body["messages"] if m["role"] == "tool"] or found
    return found


def test_the_next_turn_reads_the_previous_workspace_read_only(tmp_path):
    lines = ["Plan.", "Go on.", "/quit"]
    chat, requests = chat_through(planner, lambda url: _team(tmp_path, url), lines)
    turns = chat.session.turns()
    assert [t.status for t in turns] == ["ok", "ok"]
    saved = chat.session.dir / "turn_1" / "workspace" / "plan.txt"
    assert saved.read_text() == "step 1"
    read, write = _tool_results(requests, "Go on.")[:2]
    assert read == "step 1"
    assert "read-only" in write
    assert saved.read_text() == "step 1"
    assert "solo" not in json.dumps(asking(requests, "Go on."))


def test_continue_in_a_new_process_finds_the_previous_workspace(tmp_path):
    with FakeProvider(planner) as fake:
        team = _team(tmp_path, fake.base_url)
        chat_lines(make_chat(team), ["Plan.", "/quit"])
        env = {**os.environ, "HOME": os.environ["HOME"], "PYTHONPATH": str(REPO)}
        argv = [sys.executable, "-m", "massgen", "--config", str(team), "--no-display"]
        done = subprocess.run(
            [*argv, "--continue", "Go on."], capture_output=True, text=True, env=env, timeout=120
        )
        requests = fake.requests
    assert done.returncode == 0, done.stderr
    assert _tool_results(requests, "Go on.")[0] == "step 1"
    turns = Session.latest().turns()
    assert [t.question for t in turns] == ["Plan.", "Go on."]
