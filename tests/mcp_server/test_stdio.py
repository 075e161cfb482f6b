"""`massgen mcp` over stdio, driven by the official `mcp` client SDK."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import mcp.types as types
import pytest
from mcp_fixture import session, write_team

from massgen.testing.fake_provider import FakeProvider, Fault, Reply, cooperative_agent

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def fake():
    with FakeProvider() as provider:
        yield provider


async def test_the_tools_are_listed_with_their_schemas(tmp_path: Path, fake) -> None:
    write_team(tmp_path / "team.yaml", fake.base_url)
    async with session(tmp_path, "--config", "team.yaml") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {"ask_team", "list_teams", "review"} <= set(tools)
    ask = tools["ask_team"]
    assert ask.inputSchema["required"] == ["question"]
    assert {"team", "context", "max_cost"} <= set(ask.inputSchema["properties"])
    assert ask.outputSchema is not None and "winner" in ask.outputSchema["properties"]


async def test_ask_team_returns_the_answer_winner_votes_and_progress(tmp_path: Path, fake) -> None:
    write_team(tmp_path / "team.yaml", fake.base_url)
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async with session(tmp_path, "--config", "team.yaml") as client:
        result = await client.call_tool(
            "ask_team", {"question": "What is 2+2?"}, progress_callback=on_progress
        )
    assert not result.isError, result.content
    found = result.structuredContent
    assert found is not None
    assert found["answer"].strip() and found["status"] == "ok"
    assert found["winner"] in {"agent_0", "agent_1", "agent_2"}
    assert len(found["votes"]) == 3
    assert found["agreement"] and found["tokens"] > 0
    log_dir = Path(found["log_dir"])
    assert log_dir.is_relative_to(tmp_path) and (log_dir / "events.jsonl").is_file()
    text = result.content[0]
    assert isinstance(text, types.TextContent) and found["answer"] in text.text
    assert "winner: " in text.text
    # The user watching the calling agent sees the team work, as it happens.
    assert any(m.startswith("team started") for m in seen)
    assert sum(" answered (" in m for m in seen) >= 3
    assert sum(" voted for " in m for m in seen) == 3
    assert any(m.startswith("run finished") for m in seen)


async def test_an_unknown_team_and_an_empty_question_are_clear_errors(tmp_path: Path, fake) -> None:
    write_team(tmp_path / "team.yaml", fake.base_url)
    async with session(tmp_path, "--config", "team.yaml") as client:
        unknown = await client.call_tool("ask_team", {"question": "q", "team": "nope"})
        empty = await client.call_tool("ask_team", {"question": "  "})
        missing = await client.call_tool("ask_team", {"question": "q", "context": ["no/such"]})
    assert unknown.isError and "no team named 'nope'" in unknown.content[0].text
    assert empty.isError and "the question is empty" in empty.content[0].text
    assert missing.isError and "'no/such' does not exist" in missing.content[0].text


async def test_list_teams_lists_only_teams_that_can_run_here(tmp_path: Path, fake) -> None:
    write_team(tmp_path / "team.yaml", fake.base_url)
    teams = tmp_path / "teams"
    teams.mkdir()
    write_team(teams / "mine.yaml", fake.base_url, n=2)
    keyed = {"agents": [{"id": "g", "backend": {"type": "groq", "model": "llama-3.1-8b"}}]}
    (teams / "needs_groq.yaml").write_text(json.dumps(keyed))

    async def listed(**env: str) -> set[str]:
        async with session(tmp_path, "--config", "team.yaml", "--teams-dir", "teams", **env) as c:
            result = await c.call_tool("list_teams", {})
        assert result.structuredContent is not None
        return {team["name"] for team in result.structuredContent["teams"]}

    without = await listed()
    assert {"massgen", "mine"} <= without
    assert not {"needs_groq", "@examples/providers/groq", "@examples/mixed_team"} & without
    with_key = await listed(GROQ_API_KEY="gsk-test")
    assert {"needs_groq", "@examples/providers/groq"} <= with_key
    assert "@examples/mixed_team" not in with_key  # it needs four other keys too


def stalling(seconds: float):
    def policy(request: dict) -> Reply:
        if request.get("model") == "m1":
            return Reply(fault=Fault(stall_seconds=seconds))
        return cooperative_agent(request)

    return policy


async def test_a_cancelled_call_stops_the_run_promptly_and_keeps_its_journal(
    tmp_path: Path,
) -> None:
    with FakeProvider(stalling(60)) as slow:
        write_team(tmp_path / "team.yaml", slow.base_url, n=2)
        started = asyncio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if message and " answered (" in message:
                started.set()

        async with session(tmp_path, "--config", "team.yaml") as client:
            await client.list_tools()
            call = asyncio.create_task(
                client.call_tool("ask_team", {"question": "q"}, progress_callback=on_progress)
            )
            await asyncio.wait_for(started.wait(), 30)
            # The request ids so far: initialize 0, tools/list 1, this call 2.
            cancel = types.CancelledNotification(
                params=types.CancelledNotificationParams(requestId=2, reason="user pressed Esc")
            )
            t0 = asyncio.get_running_loop().time()
            await client.send_notification(types.ClientNotification(cancel))
            with pytest.raises(Exception, match="cancelled"):
                await asyncio.wait_for(call, 15)
            waited = asyncio.get_running_loop().time() - t0
            # The server goes on serving after the cancellation.
            assert (await client.list_tools()).tools
    assert waited < 10
    journals = list(tmp_path.glob(".massgen/massgen_logs/*/turn_1/events.jsonl"))
    assert len(journals) == 1
    events = [json.loads(line) for line in journals[0].read_text().splitlines()]
    kinds = [event["type"] for event in events]
    assert "run_started" in kinds and "answer_published" in kinds
    # Ended as Ctrl-C ends a run: what was decided is kept, the best answer with it.
    assert events[-1]["type"] == "run_finished" and events[-1]["status"] == "interrupted"
    assert events[-1]["answer"].startswith("[m0 answer 1]")
    assert "Traceback" not in (tmp_path / "server_stderr.txt").read_text()


async def test_review_sends_the_diff_to_every_agent(tmp_path: Path) -> None:
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-TIMEOUT = 30\n+TIMEOUT = 0\n"
    with FakeProvider() as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2)
        async with session(tmp_path, "--config", "team.yaml") as client:
            nothing = await client.call_tool("review", {})
            result = await client.call_tool("review", {"diff": diff, "focus": "timeouts"})
        firsts = {r["model"]: json.dumps(r) for r in fake.requests}
    assert nothing.isError and "give files to review, a diff" in nothing.content[0].text
    assert not result.isError and result.structuredContent["status"] == "ok"
    assert set(firsts) == {"m0", "m1"}
    assert all("+TIMEOUT = 0" in sent and "Focus: timeouts" in sent for sent in firsts.values())
