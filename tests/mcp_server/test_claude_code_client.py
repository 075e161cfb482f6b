"""A real coding agent asks the team (issue 27 item 4): Claude Code's CLI (the one bundled
in claude-agent-sdk), configured with `massgen mcp` as its MCP server the way a user
registers it, with its model API faked on loopback by FakeAnthropic. Its model calls
`mcp__massgen__ask_team`; the team runs on the loopback fake OpenAI provider; the team's
answer must come back into Claude Code's final output."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import pytest
from mcp_fixture import ROOT, server_env, write_team

from massgen.backends.claude_code import child_env
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="needs claude-agent-sdk (extra `claude-code`): its bundled CLI"
)
pytestmark = pytest.mark.timeout(240)

ASK_TEAM = "mcp__massgen__ask_team"
TEAM_ANSWER = "The team checked it: 2 + 2 = 4 (TEAM-7731)."


def team_agent(request: dict[str, Any]) -> Reply:
    """A member that answers, votes, and presents TEAM_ANSWER when it wins."""
    reply = cooperative_agent(request)
    if reply.text.startswith("Final answer from"):
        return dataclasses.replace(reply, text=TEAM_ANSWER)
    return reply


def claude_model(request: dict[str, Any]) -> Reply:
    """The model inside Claude Code: asks the team once, then reports what it said."""
    offered = {(t.get("function") or {}).get("name") for t in request.get("tools") or []}
    results = [m for m in request["messages"] if m["role"] == "tool"]
    if results:
        return Reply(text=f"The team answered: {results[-1]['content']}")
    if ASK_TEAM in offered:
        return Reply(tool_calls=[(ASK_TEAM, {"question": "What is 2+2?"})])
    return Reply(text="(no massgen tool offered)")  # Claude Code's side calls, if any


async def test_claude_code_asks_the_team_through_massgen_mcp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "claude_config").mkdir()
    with FakeProvider(team_agent) as team_fake, FakeAnthropic(claude_model) as claude_fake:
        team = write_team(tmp_path / "team.yaml", team_fake.base_url)
        massgen_mcp = {
            "command": sys.executable,
            "args": ["-m", "massgen", "mcp", "--config", str(team)],
            "env": {"PYTHONPATH": str(ROOT), "HOME": server_env(tmp_path)["HOME"]},
        }
        env = child_env({}, "sk-fake", claude_fake.base_url)
        env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude_config")
        options = sdk.ClaudeAgentOptions(
            cwd=str(tmp_path),
            mcp_servers={"massgen": massgen_mcp},
            allowed_tools=[ASK_TEAM],  # as a user allows it in Claude Code's settings
            setting_sources=[],
            max_turns=4,
            env=env,
        )
        messages = [m async for m in sdk.query(prompt="Ask the team: 2+2?", options=options)]
        team_calls = len(team_fake.requests)
        asked = [json.dumps(r["messages"]) for r in team_fake.requests]

    final = [m for m in messages if isinstance(m, sdk.ResultMessage)]
    assert final and not final[-1].is_error, final
    assert TEAM_ANSWER in (final[-1].result or "")
    assert team_calls == 7  # three answers, three votes, one presentation
    assert all("What is 2+2?" in a for a in asked)
