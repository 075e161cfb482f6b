"""`type: gemini_cli` through the real Gemini CLI (`gemini --acp`, npm
@google/gemini-cli), against the loopback fake Gemini API: every tool call the CLI makes
passes massgen's permission engine, its file writes land only where the engine allowed,
and its workflow action reaches the board. Skipped where `gemini` is not on PATH (CI
installs the pinned version, `.ci/run`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from backend_support import beside_api_member, host_backend

from massgen.core import events as ev
from massgen.testing import Reply, cooperative_agent
from massgen.testing.fake_gemini import FakeGemini

needs_cli = pytest.mark.skipif(
    shutil.which("gemini") is None,
    reason="Gemini CLI is not installed (npm i -g @google/gemini-cli)",
)

QUESTION = "What is the capital of France?"
SCHEMA_AT = "matches this JSON schema:\n"


def gemini_cli_agent(calls: list[tuple[str, dict[str, Any]]]):
    """A model inside Gemini CLI: it makes `calls` one by one (each after the last one's
    result), then ends its turn with the JSON action massgen asked for."""

    def policy(request: dict[str, Any]) -> Reply:
        parts = [p for c in request.get("contents") or [] for p in c.get("parts") or []]
        turn = max(
            (i for i, p in enumerate(parts) if QUESTION in str(p.get("text", ""))), default=0
        )
        prompt = str(parts[turn].get("text", "")) if parts else ""
        if SCHEMA_AT not in prompt:  # the presentation: plain text
            return Reply(text="Paris.", finish_reason="stop")
        done = sum(1 for p in parts[turn:] if "functionResponse" in p)
        if done < len(calls):
            return Reply(tool_calls=[calls[done]], finish_reason="stop")
        schema = json.loads(prompt.split(SCHEMA_AT, 1)[1])
        options = schema.get("anyOf") or [schema]
        actions = [o for o in options if o["properties"]["action"].get("const") != "tool"]
        chat = {"model": "gemini-cli-fake", "messages": [{"role": "user", "content": prompt}]}
        chosen = actions[0] if len(actions) == 1 else {"anyOf": actions}
        chat["response_format"] = {"type": "json_schema", "json_schema": {"schema": chosen}}
        action = cooperative_agent(chat).text
        return Reply(text=f"I checked the files.\n{action}", finish_reason="stop")

    return policy


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@needs_cli
async def test_a_gemini_cli_member_and_an_api_member_reach_an_answer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # Gemini CLI's own state goes there
    # Gemini CLI lets its tools write its own project temp directory, outside the
    # workspace: there the engine must say no.
    outside = tmp_path / "home" / ".gemini" / "tmp" / "gc-ws" / "stolen.txt"
    calls = [
        ("write_file", {"file_path": "notes.txt", "content": "Paris"}),
        ("write_file", {"file_path": str(outside), "content": "stolen"}),
        # A read: Gemini CLI's own policy would run it unasked; massgen's makes it ask.
        ("read_file", {"file_path": "notes.txt"}),
    ]
    with FakeGemini(gemini_cli_agent(calls)) as gemini:
        key, model = "fake-gemini-key", "gemini-2.5-flash"
        backend = host_backend("gemini_cli", "gc_ws", gemini.base_url, key, model=model)
        result, events = await beside_api_member("gc", backend, QUESTION, tmp_path / "log")
        sent = json.dumps(gemini.requests)
        keys = {h.get("x-goog-api-key") for h in gemini.headers}

    assert result.ok, result
    published = [e for e in events if isinstance(e, ev.AnswerPublished)]
    assert {e.agent for e in published} == {"gc", "api"}
    # The engine decided both writes: the note allowed, the outside one refused, in the ledger.
    decided = [e for e in events if isinstance(e, ev.PermissionDecided) and e.agent == "gc"]
    assert [(e.tool, e.allowed) for e in decided if e.tool == "write_file"][:2] == [
        ("write_file", True),
        ("write_file", False),
    ]
    assert any(e.tool == "read_file" and e.allowed for e in decided)
    records = [
        json.loads(line)
        for path in (tmp_path / "log").rglob("*.jsonl")
        if "permission" in path.name
        for line in path.read_text().splitlines()
    ]
    assert [r["decision"] for r in records if r["agent"] == "gc"][:2] == ["allow", "deny"]
    workspaces = list((tmp_path / ".massgen").rglob("gc_ws"))
    written = {p.name: p.read_text() for w in workspaces for p in files_under(w)}
    assert written.get("notes.txt") == "Paris"
    assert not outside.exists()
    assert keys == {"fake-gemini-key"}
    assert "canceled" in sent  # the refused call's result, as the model read it
    started = [e for e in events if isinstance(e, ev.ToolCallStarted) and e.agent == "gc"]
    assert [e.name for e in started][:3] == ["write_file", "write_file", "read_file"]
    assert any(
        isinstance(e, ev.UsageReported) and e.agent == "gc" and e.usage.input_tokens for e in events
    )


@needs_cli
async def test_a_crashing_gemini_cli_fails_only_its_member(tmp_path, monkeypatch):
    """A CLI that dies at start: its member fails with a message naming Gemini CLI and
    what it said; the API member still answers, and no process is left behind."""
    monkeypatch.chdir(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    crash = bin_dir / "gemini"
    crash.write_text("#!/bin/sh\necho 'gemini: fatal: out of cheese' >&2\nexit 7\n")
    crash.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    backend = {"type": "gemini_cli", "api_key": "k"}
    result, events = await beside_api_member("gc", backend, QUESTION)

    assert result.ok, result
    failed = [e for e in events if isinstance(e, ev.AgentFailed) and e.agent == "gc"]
    assert failed and "Gemini CLI" in failed[0].error and "out of cheese" in failed[0].error
    assert {e.agent for e in events if isinstance(e, ev.AnswerPublished)} == {"api"}


def test_a_missing_gemini_cli_is_a_config_error_naming_the_install(tmp_path, monkeypatch):
    from massgen import api
    from massgen.core.errors import ConfigError

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        api.load({"agents": [{"id": "gc", "backend": {"type": "gemini_cli"}}]})
    text = str(caught.value)
    assert "npm install -g @google/gemini-cli@" in text and "type: gemini" in text


def test_the_cli_gets_only_the_environment_it_needs():
    from massgen.backends.gemini_cli import child_env

    massgen_env = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "OPENAI_API_KEY": "sk-o"}
    massgen_env["GEMINI_API_KEY"] = "env-key"
    env = child_env(massgen_env, "config-key", "http://127.0.0.1:9")
    assert "OPENAI_API_KEY" not in env and env["PATH"] == "/bin" and env["LC_ALL"] == "C"
    assert env["GEMINI_API_KEY"] == "config-key"
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"
    # Without a key: Gemini CLI's own login, and no key of massgen's environment.
    assert "GEMINI_API_KEY" not in child_env(massgen_env, None, None)


def test_gemini_cli_calls_whose_effects_cannot_be_told_are_refused(tmp_path):
    from massgen.backends.gemini_cli_tools import Unjudgeable, effects
    from massgen.core.effects import Read, Write

    edit = {"kind": "edit", "locations": [{"path": "a.txt"}]}
    assert effects("replace", edit, tmp_path) == (Write(tmp_path / "a.txt"),)
    assert effects("glob", {"kind": "search", "locations": []}, tmp_path) == (Read(tmp_path),)
    bookkeeping = {"kind": "think", "call_id": "write_todos__write_todos_17_0"}
    assert effects("write_todos", bookkeeping, tmp_path) == ()
    refused = [
        ("run_shell_command", {"kind": "execute"}),
        ("write_file", {"kind": "edit", "locations": []}),  # no path: nothing to judge
        # A bookkeeping name on a call id the CLI did not give: not believed.
        ("write_todos", {"kind": "other", "call_id": "write_todos__evil"}),
        ("mcp_tool", {"kind": "other"}),
    ]
    for name, arguments in refused:
        with pytest.raises(Unjudgeable):
            effects(name, arguments, tmp_path)


def test_gemini_cli_asks_for_every_tool_in_the_policy_it_is_given():
    import tomllib

    from massgen.backends.gemini_cli_tools import DENIED_TOOLS, policy_toml

    rules = tomllib.loads(policy_toml())["rule"]
    assert {"toolName": "*", "decision": "ask_user", "priority": 998} in rules
    denied = next(r for r in rules if r["decision"] == "deny")
    assert "run_shell_command" in denied["toolName"] and denied["priority"] > 998
    assert set(DENIED_TOOLS) == set(denied["toolName"])
