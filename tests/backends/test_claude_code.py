"""`type: claude_code` through the real Claude Code CLI (bundled by claude-agent-sdk), against
the loopback fake Anthropic server: the CLI's every tool call passes massgen's permission
engine, and its workflow action reaches the board."""

from __future__ import annotations

import json
from typing import Any

import pytest

from massgen.core import events as ev
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.testing.fake_anthropic import FakeAnthropic

pytest.importorskip("claude_agent_sdk")

PREFIX = "mcp__massgen__"
QUESTION = "What is the capital of France?"


def claude_code_agent(outside: str, first: tuple[str, dict[str, Any]] | None = None):
    """A model inside Claude Code: it first asks to Read `outside` (or makes the `first`
    call), then, having read the result, answers or votes through massgen's MCP tools;
    after the action is recorded it stops."""

    def policy(request: dict[str, Any]) -> Reply:
        messages = request["messages"]
        results = [m for m in messages if m["role"] == "tool"]
        if not results:
            return Reply(tool_calls=[first or ("Read", {"file_path": outside})])
        if "Recorded" in str(results[-1]["content"]):
            return Reply(text="Done.")
        tools = [
            {**t, "function": {**t["function"], "name": t["function"]["name"].removeprefix(PREFIX)}}
            for t in request.get("tools", [])
        ]
        reply = cooperative_agent({**request, "tools": tools})
        return Reply(
            text=reply.text, tool_calls=[(PREFIX + name, args) for name, args in reply.tool_calls]
        )

    return policy


async def test_a_claude_code_member_and_an_api_member_reach_an_answer(tmp_path, monkeypatch):
    from massgen import api

    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("NOT FOR CLAUDE")
    events: list[ev.AnyEvent] = []
    with (
        FakeAnthropic(claude_code_agent(str(outside))) as claude,
        FakeProvider(cooperative_agent) as other,
    ):
        config = {
            "agents": [
                {
                    "id": "cc",
                    "backend": {
                        "type": "claude_code",
                        "cwd": "cc_ws",
                        "base_url": claude.base_url,
                        "api_key": "sk-fake",
                        "model": "claude-sonnet-4-5",
                    },
                },
                {
                    "id": "api",
                    "backend": {"type": "chatcompletion", "base_url": other.base_url, "model": "m"},
                },
            ]
        }
        run = api.TeamRun(
            api.load(config), QUESTION, sinks=[events.append], log_dir=tmp_path / "log"
        )
        result = await run.execute()
        sent = json.dumps(claude.requests)

    assert result.ok, result
    published = [e for e in events if isinstance(e, ev.AnswerPublished)]
    assert {e.agent for e in published} == {"cc", "api"}
    # The engine decided Claude Code's Read of a file outside its workspace: denied, in the
    # ledger, and the file's text never reached the model.
    decided = [e for e in events if isinstance(e, ev.PermissionDecided) and e.agent == "cc"]
    reads = [e for e in decided if e.tool == "Read"]
    assert reads and not any(e.allowed for e in reads)
    ledger = (tmp_path / "log").rglob("*.jsonl")
    records = [
        json.loads(line)
        for path in ledger
        if "permission" in path.name
        for line in path.read_text().splitlines()
    ]
    assert any(
        r["agent"] == "cc" and r["tool"] == "Read" and r["decision"] == "deny" for r in records
    )
    assert "NOT FOR CLAUDE" not in sent
    assert "refused by the permission engine" in sent
    # Its tool call is shown like any member's.
    started = [e for e in events if isinstance(e, ev.ToolCallStarted) and e.agent == "cc"]
    assert any(e.name == "Read" for e in started)
    assert any(
        isinstance(e, ev.UsageReported) and e.agent == "cc" and e.usage.input_tokens for e in events
    )


async def test_claude_codes_own_bash_is_refused_and_recorded(tmp_path, monkeypatch):
    """Claude Code's Bash would run outside massgen's sandbox: refused, in the ledger, and
    the command never runs; the member still answers."""
    from massgen import api

    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "ran.txt"
    events: list[ev.AnyEvent] = []
    bash = ("Bash", {"command": f"touch {marker}", "description": "touch"})
    with FakeAnthropic(claude_code_agent("", first=bash)) as claude:
        backend = {
            "type": "claude_code",
            "cwd": "cc_ws",
            "base_url": claude.base_url,
            "api_key": "sk-fake",
        }
        config = {"agents": [{"id": "cc", "backend": backend}]}
        result = await api.TeamRun(
            api.load(config), QUESTION, sinks=[events.append], logs=False
        ).execute()
        sent = json.dumps(claude.requests)

    assert result.ok, result
    assert not marker.exists()
    decided = [e for e in events if isinstance(e, ev.PermissionDecided) and e.tool == "Bash"]
    assert decided and not decided[0].allowed and "sandbox" in decided[0].reason
    assert "execute_command" in sent  # the refusal the model reads says what to use


def test_the_cli_gets_only_the_environment_it_needs():
    from massgen.backends.claude_code import child_env

    massgen_env = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "OPENAI_API_KEY": "sk-o"}
    massgen_env["ANTHROPIC_API_KEY"] = "sk-env"
    env = child_env(massgen_env, "sk-config", "http://127.0.0.1:9")
    # The SDK lays these over massgen's environment: what is not needed is blanked.
    assert {**massgen_env, **env}["OPENAI_API_KEY"] == ""
    assert "PATH" not in env and "HOME" not in env and "LC_ALL" not in env
    assert env["ANTHROPIC_API_KEY"] == "sk-config"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    # Without a key: Claude Code's own login, and no key of massgen's environment.
    assert child_env(massgen_env, None, None)["ANTHROPIC_API_KEY"] == ""
