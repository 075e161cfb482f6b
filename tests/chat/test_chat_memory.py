"""Filesystem memory across a chat's turns: the winner's memories are saved with the
session and every agent of the next turn starts from them; they never leave the
session's and the run's folders, and another session does not see them."""

from __future__ import annotations

from pathlib import Path

from chat_team import asking, chat_through, question_of, workspace_team
from test_chat import chat_lines, make_chat

from massgen.sessions import Session
from massgen.testing import FakeProvider, Reply, cooperative_agent

PREFS = "memory/short_term/prefs.md"
MARK = "likes haiku"


def _note(model: str) -> str:
    return f"---\nname: prefs\ndescription: the user's taste\n---\nThe user {MARK} ({model}).\n"


def remember_then_answer(request: dict) -> Reply:
    """Turn "Write a poem.": each agent writes its own version of prefs.md, then answers.
    Other turns: answer at once."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m for m in request["messages"] if m["role"] == "tool"]
    if question_of(request) == "Write a poem." and "new_answer" in offered and not results:
        content = _note(request["model"])
        return Reply(tool_calls=[("write_file", {"path": PREFS, "content": content})])
    return cooperative_agent(request) if offered else Reply(text="A poem.")


def _team(folder: Path, base_url: str) -> Path:
    orchestrator = {
        "max_new_answers_per_agent": 1,
        "coordination": {"enable_memory_filesystem_mode": True},
    }
    return workspace_team(folder, base_url, {"poet": "m-a", "critic": "m-b"}, orchestrator)


def _first_systems(requests: list[dict], question: str) -> dict[str, str]:
    """Each model's first system prompt for `question`."""
    found: dict[str, str] = {}
    for body in asking(requests, question):
        found.setdefault(body["model"], body["messages"][0]["content"])
    return found


def test_the_winners_memories_start_every_agent_of_the_next_turn(tmp_path):
    lines = ["Write a poem.", "Another one.", "/quit"]
    chat, requests = chat_through(remember_then_answer, lambda url: _team(tmp_path, url), lines)
    first, second = chat.session.turns()
    assert first.status == "ok" and second.status == "ok"
    winner_model = {"poet": "m-a", "critic": "m-b"}[str(first.winner)]
    saved = chat.session.dir / "turn_1" / "workspace" / PREFS
    assert saved.read_text() == _note(winner_model)
    systems = _first_systems(requests, "Another one.")
    assert set(systems) == {"m-a", "m-b"}
    for system in systems.values():
        assert f"## {PREFS}: the user's taste\nThe user {MARK} ({winner_model})." in system
        assert system.count(MARK) == 1  # the loser's version did not carry
    # the carried memory is each agent's own, writable copy
    for name in ("poet", "critic"):
        (copy,) = (tmp_path / ".massgen" / "workspaces").glob(f"*/ws_{name}/{PREFS}")
        assert copy.read_text() == _note(winner_model)


def test_memories_stay_in_the_massgen_folders_and_out_of_other_sessions(tmp_path):
    with FakeProvider(remember_then_answer) as fake:
        team = _team(tmp_path, fake.base_url)
        chat_lines(make_chat(team), ["Write a poem.", "/quit"])
        other = make_chat(team, Session.new())
        chat_lines(other, ["Another one.", "/quit"])
        requests = fake.requests
    for system in _first_systems(requests, "Another one.").values():
        assert MARK not in system and "(none yet)" in system
    kept = (
        ".massgen/workspaces",
        ".massgen/snapshots",
        ".massgen/sessions",
        ".massgen/massgen_logs",
    )
    holders = [
        path.relative_to(tmp_path).as_posix()
        for path in tmp_path.rglob("*")
        if path.is_file() and MARK.encode() in path.read_bytes()
    ]
    assert holders and all(h.startswith(kept) for h in holders), holders
