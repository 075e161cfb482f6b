"""Files named in `context` are the team's to read, never to write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_fixture import session, write_team

from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent

pytestmark = pytest.mark.timeout(120)
NOTES = "The deploy script forgets to run the migrations.\n"


def reader_and_writer(target: Path, results: list[str]):
    """Agent m0 reads `target`, then tries to overwrite it; the others cooperate."""

    def policy(request: dict) -> Reply:
        messages = request.get("messages") or []
        done = [m for m in messages if m.get("role") == "tool"]
        if request.get("model") == "m0" and request.get("tools") and not done:
            return Reply(tool_calls=[
                ("read_file", {"path": str(target)}),
                ("write_file", {"path": str(target), "content": "overwritten\n"}),
            ])  # fmt: skip
        if request.get("model") == "m0" and done and not results:
            results.extend(str(m.get("content")) for m in done)
        return cooperative_agent(request)

    return policy


async def test_agents_read_context_files_and_cannot_change_them(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES)
    results: list[str] = []
    with FakeProvider(reader_and_writer(notes.resolve(), results)) as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2, workspaces=True)
        before = outside_workspaces(tmp_path)
        async with session(tmp_path, "--config", "team.yaml") as client:
            result = await client.call_tool(
                "ask_team", {"question": "What is wrong?", "context": ["notes.md"]}
            )
    assert not result.isError, result.content
    assert notes.read_text() == NOTES
    read, write = results
    assert "migrations" in read
    assert "overwritten" not in read and "is read-only" in write
    assert outside_workspaces(tmp_path) == before


def outside_workspaces(folder: Path) -> dict[str, bytes]:
    """Every file the run could have touched but its own (.massgen: workspaces, logs)."""
    ours = {".massgen", "home", "server_stderr.txt"}
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not ours & set(p.relative_to(folder).parts)
    }


async def test_a_team_without_workspaces_gets_the_files_text(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(NOTES)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    with FakeProvider() as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2)
        async with session(tmp_path, "--config", "team.yaml") as client:
            result = await client.call_tool(
                "ask_team", {"question": "What is wrong?", "context": ["notes.md"]}
            )
            secret = await client.call_tool("ask_team", {"question": "q", "context": [".env"]})
        sent = json.dumps(fake.requests)
    assert not result.isError
    assert "forgets to run the migrations" in sent
    assert secret.isError and "holds secrets" in secret.content[0].text
    assert "sk-secret" not in sent
