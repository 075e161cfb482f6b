"""`type: claude_code` through the real Claude Code CLI (bundled by claude-agent-sdk), against
the loopback fake Anthropic server: the CLI's every tool call passes massgen's permission
engine, and its workflow action reaches the board."""

from __future__ import annotations

import json
from typing import Any

import pytest
from backend_support import beside_api_member, host_backend, team_run

from massgen.core import events as ev
from massgen.testing import Reply, cooperative_agent
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


def cc_backend(base_url: str, **more: Any) -> dict[str, Any]:
    """Claude Code on the fake Anthropic server at `base_url`, working in `cc_ws`."""
    return host_backend("claude_code", "cc_ws", base_url, "sk-fake", **more)


async def test_a_claude_code_member_and_an_api_member_reach_an_answer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("NOT FOR CLAUDE")
    with FakeAnthropic(claude_code_agent(str(outside))) as claude:
        backend = cc_backend(claude.base_url, model="claude-sonnet-4-5")
        result, events = await beside_api_member("cc", backend, QUESTION, tmp_path / "log")
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
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "ran.txt"
    bash = ("Bash", {"command": f"touch {marker}", "description": "touch"})
    with FakeAnthropic(claude_code_agent("", first=bash)) as claude:
        config = {"agents": [{"id": "cc", "backend": cc_backend(claude.base_url)}]}
        result, events = await team_run(config, QUESTION)
        sent = json.dumps(claude.requests)
        names = tool_names(claude.requests)

    assert result.ok, result
    assert "Read" in names and not names & {"WebSearch", "WebFetch"}  # no enable_web_search
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


def tool_names(requests: list[dict[str, Any]]) -> set[str]:
    return {t["name"] for body in requests for t in body.get("tools", [])}


def tool_results(requests: list[dict[str, Any]]) -> list[Any]:
    return [
        block.get("content")
        for body in requests
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def system_of(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


async def test_the_predecessors_claude_code_keys_reach_claude_code(tmp_path, monkeypatch):
    """`allowed_tools`/`disallowed_tools` with Claude Code's names are the tools it gets,
    `system_prompt` replaces its own, and under `permission_mode: bypassPermissions` the
    engine still refuses the Read outside the workspace."""
    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("NOT FOR CLAUDE")
    with FakeAnthropic(claude_code_agent(str(outside))) as claude:
        backend = cc_backend(
            claude.base_url,
            allowed_tools=["Read", "Grep", "WebFetch"],
            disallowed_tools=["WebFetch"],
            permission_mode="bypassPermissions",
            system_prompt="You are the CC-TEST agent.",
            append_system_prompt="Sign as CC-TAIL.",
        )
        result, events = await team_run({"agents": [{"id": "cc", "backend": backend}]}, QUESTION)
        requests = [body for body in claude.requests if body.get("tools")]

    assert result.ok, result
    names = tool_names(requests)
    assert {"Read", "Grep", PREFIX + "new_answer"} <= names
    assert not names & {"Write", "Edit", "Bash", "WebFetch"}
    system = system_of(requests[0])
    # Claude Code's own prompt ("You are Claude Code, ...") is replaced by the config's.
    assert "You are the CC-TEST agent." in system and "You are Claude Code" not in system
    assert "new_answer" in system and system.rstrip().endswith("Sign as CC-TAIL.")
    assert "NOT FOR CLAUDE" not in json.dumps(requests)
    reads = [e for e in events if isinstance(e, ev.PermissionDecided) and e.tool == "Read"]
    assert reads and not any(e.allowed for e in reads)


async def test_max_turns_bounds_claude_codes_model_calls(tmp_path, monkeypatch):
    """`max_turns: 1`: Claude Code stops after its first model call (a tool call), and the
    member fails with a message naming why; the other member still answers."""
    monkeypatch.chdir(tmp_path)
    with FakeAnthropic(claude_code_agent(str(tmp_path / "x.txt"))) as claude:
        backend = cc_backend(claude.base_url, max_turns=1)
        result, events = await beside_api_member("cc", backend, QUESTION)
        calls = [body for body in claude.requests if body.get("tools")]

    assert result.ok, result
    assert len(calls) == 1
    failed = [e for e in events if isinstance(e, ev.AgentFailed) and e.agent == "cc"]
    assert failed and "max_turns" in failed[0].error


async def test_a_configured_mcp_server_reaches_claude_code_through_the_engine(
    tmp_path, monkeypatch
):
    """The config's MCP server runs under massgen and its tools reach Claude Code on the
    `massgen` server; the engine decides each call, and its cost comes from Claude Code."""
    import sys
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    server = str(Path(__file__).parents[1] / "tools" / "fault_server.py")
    echo = (PREFIX + "mcp__fx__echo", {"text": "hello from the fx server"})
    with FakeAnthropic(claude_code_agent("", first=echo)) as claude:
        backend = cc_backend(  # no model: Claude Code's default, which no table of ours prices
            claude.base_url,
            mcp_servers={"fx": {"command": sys.executable, "args": [server], "trusted": True}},
            enable_web_search=True,  # Claude Code's own WebSearch and WebFetch
        )
        result, events = await team_run({"agents": [{"id": "cc", "backend": backend}]}, QUESTION)
        results = json.dumps(tool_results(claude.requests))
        names = tool_names(claude.requests)

    assert result.ok, result
    decided = [e for e in events if isinstance(e, ev.PermissionDecided) and "echo" in e.tool]
    assert [(e.agent, e.tool, e.allowed) for e in decided] == [("cc", "mcp__fx__echo", True)]
    assert "hello from the fx server" in results  # the server's answer reached the model
    assert {"WebSearch", "WebFetch"} <= names
    costs = [e.cost_usd for e in events if isinstance(e, ev.UsageReported) and e.agent == "cc"]
    assert costs and all(c is not None and c > 0 for c in costs)
    assert result.total_cost_usd and result.total_cost_usd > 0
