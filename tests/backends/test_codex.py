"""`type: codex` through the real Codex CLI (its app server), against the loopback fake
Responses API: every command Codex wants to run passes massgen's permission engine, what
runs stays in Codex's sandbox, and its workflow action reaches the board."""

from __future__ import annotations

import gc
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from backend_support import beside_api_member, host_backend, team_run

from massgen.backends import codex_tools
from massgen.core import events as ev
from massgen.testing import Reply, coding_agent, cooperative_agent
from massgen.testing.fake_openai_responses import FakeResponses

QUESTION = "What is the capital of France?"
MODEL = "gpt-5.1-codex"  # a model Codex has no metadata for: it sends every tool as is
CLI = codex_tools.find_cli(None, os.environ)
needs_cli = pytest.mark.skipif(CLI is None, reason=f"no Codex CLI ({codex_tools.INSTALL})")
needs_extra = pytest.mark.skipif(
    codex_tools.wheel_cli() is None, reason="no massgen[codex] (pip install 'massgen[codex]')"
)


def codex_agent(commands: list[str]):
    """A model inside Codex: it runs each of `commands` in turn through Codex's
    `exec_command`, then answers through massgen's `new_answer` (or votes)."""

    def policy(request: dict[str, Any]) -> Reply:
        done = [m for m in request["messages"] if m["role"] == "tool"]
        if len(done) < len(commands):
            return Reply(tool_calls=[("exec_command", {"cmd": commands[len(done)]})])
        actions = {"tools": [t for t in request.get("tools", []) if t["function"]["name"]
                             in ("new_answer", "vote")]}  # fmt: skip
        return cooperative_agent({**request, **actions})

    return policy


def patch(path: str) -> str:
    """Codex's own file change, as a model writes it in a command: Codex runs it as a
    file change (`apply_patch`), not through the shell."""
    return (
        f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {path}\n+patched\n*** End Patch\nEOF"
    )


def ledger(log_dir) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in log_dir.rglob("*.jsonl")
        if "permission" in path.name
        for line in path.read_text().splitlines()
    ]


@needs_cli
async def test_a_codex_member_and_an_api_member_reach_an_answer(tmp_path, monkeypatch):
    """Codex's command and file change inside its workspace are allowed and happen; its
    read of a file outside and its file change outside are refused by the engine and do
    not happen; every one is in the ledger."""
    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("NOT FOR CODEX")
    escaped = tmp_path / "patched.txt"
    commands = ["echo made > made.txt", f"cat {outside}", patch(str(escaped)), patch("notes.txt")]
    with FakeResponses(codex_agent(commands)) as fake:
        backend = host_backend(
            "codex", "cx_ws", fake.base_url, "sk-fake", model=MODEL, reasoning_effort="high"
        )  # the predecessor's codex configs set a reasoning_effort
        result, events = await beside_api_member("cx", backend, QUESTION, tmp_path / "log")
        sent = json.dumps(fake.requests)
        efforts = {(body.get("reasoning") or {}).get("effort") for body in fake.requests}

    assert result.ok, result
    assert efforts == {"high"}  # the config's reasoning_effort reached the model's requests
    published = [e for e in events if isinstance(e, ev.AnswerPublished)]
    assert {e.agent for e in published} == {"cx", "api"}
    decided = [e for e in events if isinstance(e, ev.PermissionDecided) and e.agent == "cx"]
    # Each of its turns makes all four calls; the ledger has every one.
    each = [
        ("exec_command", True),
        ("exec_command", False),
        ("apply_patch", False),
        ("apply_patch", True),
    ]
    turns = len(decided) // len(each)
    assert turns >= 1
    assert [(e.tool, e.allowed) for e in decided] == each * turns
    records = [r for r in ledger(tmp_path / "log") if r["agent"] == "cx"]
    assert [r["decision"] for r in records] == ["allow", "deny", "deny", "allow"] * turns
    made = list((tmp_path / ".massgen").rglob("made.txt"))
    assert made and made[0].read_text() == "made\n"
    notes = list((tmp_path / ".massgen").rglob("notes.txt"))
    assert notes and notes[0].read_text() == "patched\n"
    assert "NOT FOR CODEX" not in sent and not escaped.exists()
    # The model reads why each refused call did not run (Codex itself says only "rejected
    # by user"): the engine's reason, naming the rule's subject.
    assert f"read `{outside}` is refused" in sent and f"write `{escaped}` is refused" in sent
    started = [e for e in events if isinstance(e, ev.ToolCallStarted) and e.agent == "cx"]
    assert [e.name for e in started][:4] == [name for name, _ in each]
    assert any(
        isinstance(e, ev.UsageReported) and e.agent == "cx" and e.usage.input_tokens for e in events
    )


@needs_cli
async def test_what_codex_runs_stays_in_its_sandbox(tmp_path, monkeypatch):
    """Even a command the engine allows (`permissions: false`) cannot write outside the
    workspace or reach the network: Codex's sandbox holds it, and never drops it."""
    from massgen import api

    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside_marker"
    # A context path is mounted read-only: the write there is one the sandbox blocks, and
    # Codex would retry it outside the sandbox but for the profile's denied read.
    (tmp_path / "ctx").mkdir()
    escaped = tmp_path / "ctx" / "escaped"
    commands = [f"touch {outside}", "touch inside_marker", f"touch {escaped}"]
    with FakeResponses(codex_agent(commands)) as fake:
        port = fake.base_url.split(":")[-1].split("/")[0]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('IN')"
        commands.append(f'python3 -c "{connect}"')
        backend = {"type": "codex", "cwd": "cx_ws", "base_url": fake.base_url, "model": MODEL}
        config = {
            "agents": [{"id": "cx", "backend": {**backend, "api_key": "sk-fake"}}],
            "orchestrator": {"context_paths": [{"path": "ctx"}]},
            "permissions": False,
        }
        result = await api.TeamRun(api.load(config), QUESTION, logs=False).execute()
        # What the model read of its commands (each request repeats the turn so far).
        outputs = max(([item["output"] for item in body["input"]
                        if item.get("type") == "function_call_output"]
                       for body in fake.requests), key=len)  # fmt: skip

    assert result.ok, result
    assert not outside.exists() and len(outputs) >= 4
    assert "Read-only file system" in outputs[2] and not escaped.exists()
    assert "Process exited with code 1" in outputs[3] and "\nIN" not in outputs[3]
    assert list((tmp_path / ".massgen").rglob("inside_marker"))


def broken_cli(tmp_path, script: str) -> str:
    path = tmp_path / "codex"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


async def run_with_api_member(codex: dict[str, Any]) -> tuple[Any, list[ev.AnyEvent]]:
    backend = {"type": "codex", "api_key": "sk-fake", **codex}
    return await beside_api_member("cx", backend, QUESTION)


async def test_a_crashing_codex_fails_that_member_only(tmp_path, monkeypatch, caplog):
    """A CLI that dies at once: the member fails with a message naming Codex and what it
    said; the API member still wins; no error is left unread on the loop."""
    monkeypatch.chdir(tmp_path)
    cli = broken_cli(tmp_path, "echo 'codex: something broke' >&2\nexit 3\n")
    result, events = await run_with_api_member({"codex_path": cli})
    gc.collect()  # an exception never retrieved is reported when its future is collected
    assert "never retrieved" not in caplog.text

    assert result.ok and result.winner == "api", result
    failed = [e for e in events if isinstance(e, ev.AgentFailed) and e.agent == "cx"]
    assert failed and "Codex CLI exited" in failed[0].error
    assert "exit status 3" in failed[0].error and "something broke" in failed[0].error


async def test_a_hanging_codex_is_stopped_and_leaves_no_process(tmp_path, monkeypatch):
    """A CLI that never answers: its turn ends at `request_timeout_seconds`, the member
    fails naming why, and the CLI and what it started are gone."""
    monkeypatch.chdir(tmp_path)
    pids = tmp_path / "pids"
    cli = broken_cli(tmp_path, f"sleep 600 &\necho $! > {pids}\nexec sleep 600\n")
    result, events = await run_with_api_member(
        {"codex_path": cli, "request_timeout_seconds": 2, "max_retries": 0}
    )

    assert result.ok and result.winner == "api", result
    failed = [e for e in events if isinstance(e, ev.AgentFailed) and e.agent == "cx"]
    assert failed and "Codex did not finish its turn within 2s" in failed[0].error
    assert not any(alive(int(pid)) for pid in pids.read_text().split())


def alive(pid: int) -> bool:
    """Running, not ended (an ended one may wait, a zombie, for whoever adopted it)."""
    try:
        status = open(f"/proc/{pid}/status").read()  # noqa: SIM115
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def test_a_missing_cli_is_a_config_error_naming_the_install(tmp_path, monkeypatch):
    from massgen import api
    from massgen.core.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    config = {"agents": [{"id": "cx", "backend": {"type": "codex", "codex_path": "/nope/codex"}}]}
    with pytest.raises(ConfigError) as caught:
        api.load(config)
    text = str(caught.value)
    assert "codex_path" in text and codex_tools.INSTALL in text and "type: openai" in text


def test_a_cli_found_nowhere_is_a_config_error_naming_file_key_and_install(tmp_path, monkeypatch):
    from massgen import api
    from massgen.core.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # no codex there
    monkeypatch.setenv("HOME", str(tmp_path))  # nor in massgen's cache
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(codex_tools.PATH_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "codex_cli_bin", None)  # nor massgen[codex]
    config = tmp_path / "team.yaml"
    config.write_text("agents:\n  - id: cx\n    backend: {type: codex}\n")
    with pytest.raises(ConfigError) as caught:
        api.load(str(config))
    text = str(caught.value)
    assert text.startswith(f"{config}: agents[0].backend.type: ")
    assert "no `codex` on PATH" in text and codex_tools.INSTALL in text


@needs_extra
async def test_massgen_codex_alone_runs_a_codex_member(tmp_path, monkeypatch):
    """`pip install 'massgen[codex]'` is enough: with no `codex` on PATH (nor
    $MASSGEN_CODEX_PATH), a Codex member runs the CLI the extra installed, sandboxed with
    the extra's whole package readable."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # no codex there, nor anything else
    monkeypatch.delenv(codex_tools.PATH_ENV, raising=False)
    with FakeResponses(coding_agent()) as fake:
        backend = host_backend("codex", "cx_ws", fake.base_url, "sk-fake", model=MODEL)
        result, _ = await team_run({"agents": [{"id": "cx", "backend": backend}]}, QUESTION)
        agents = {headers.get("user-agent", "") for headers in fake.headers}

    assert result.ok and result.answer, result
    # Codex names its version in every request it sends: the extra's, not npm's.
    assert agents and all(f"/{codex_tools.WHEEL_PIN} " in agent for agent in agents), agents
    cli = codex_tools.wheel_cli()
    assert cli is not None and codex_tools.package_root(cli) == cli.parent.parent


def test_the_extra_installs_the_codex_the_messages_name():
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert f'codex = ["openai-codex-cli-bin=={codex_tools.WHEEL_PIN}"]' in pyproject
    assert f"Codex {codex_tools.WHEEL_PIN}" in codex_tools.INSTALL


def test_the_npm_copy_in_the_cache_counts_only_with_node_to_run_it(tmp_path):
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    launcher = home / ".cache" / "massgen" / "codex" / "node_modules" / ".bin" / "codex"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("#!/usr/bin/env node\n")
    bin_dir.mkdir()
    environ = {"HOME": str(home), "PATH": str(bin_dir)}
    assert codex_tools.npm_cache_cli(environ) is None  # `node` is not on PATH
    node = bin_dir / "node"
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    assert codex_tools.npm_cache_cli(environ) == launcher


def test_the_cli_gets_only_the_environment_it_needs(tmp_path):
    from massgen.backends.codex import child_env

    environ = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "ANTHROPIC_API_KEY": "sk-a"}
    environ["OPENAI_API_KEY"] = "sk-env"
    env = child_env(environ, "sk-config", tmp_path)
    assert env == {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "CODEX_HOME": str(tmp_path),
        "OPENAI_API_KEY": "sk-config",
    }
    assert "OPENAI_API_KEY" not in child_env(environ, None, tmp_path)  # its own login


def test_ci_installs_the_pinned_cli():
    from pathlib import Path

    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    assert f"@openai/codex@{codex_tools.PIN}" in ci
