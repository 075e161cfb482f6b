"""Issue 28's done-when: a team of a Claude Code member, a Codex member and an API member,
each CLI the real one (Claude Code bundled by claude-agent-sdk, Codex's app server) against
a loopback fake of its vendor's API, finishes with a winner; every tool call either CLI's
model made was decided by massgen's permission engine (the run's ledger and events), and
nothing outside the workspaces changed (the test's folders and the working directory are
snapshotted around the run). Skipped where either CLI is missing; CI installs both."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from massgen.backends import codex_tools
from massgen.core import events as ev
from massgen.testing import FakeProvider, coding_agent, cooperative_agent
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_openai_responses import FakeResponses

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("claude_agent_sdk") is None,
        reason="no Claude Code (pip install 'massgen[claude-code]')",
    ),
    pytest.mark.skipif(
        codex_tools.find_cli(None, os.environ) is None,
        reason=f"no Codex CLI ({codex_tools.INSTALL})",
    ),
]

QUESTION = "What is the capital of France?"
CC_PREFIX = "mcp__massgen__"  # massgen's tools and actions, as Claude Code names them
# One CLI turn on a loaded two-core machine takes seconds to a minute; the bounds below are
# several times that, and the whole test is bounded too.
TURN_SECONDS = 240
RUN_SECONDS = 600


def snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, str]:
    """Every file and folder under `root` (but those under `skip`) with its content's hash."""
    seen = {}
    for path in root.rglob("*"):
        if any(path == s or s in path.parents for s in skip):
            continue
        if path.is_symlink():
            seen[str(path)] = "link:" + os.readlink(path)
        elif path.is_file():
            seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            seen[str(path)] = "dir"
    return seen


def ledger(log_dir: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in log_dir.rglob("permissions.jsonl")
        for line in path.read_text().splitlines()
    ]


def patch(path: str) -> str:
    """A file change as Codex's model writes it (Codex turns it into its apply_patch)."""
    return (
        f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {path}\n+patched\n*** End Patch\nEOF"
    )


@pytest.mark.timeout(RUN_SECONDS + 120)
async def test_a_claude_code_codex_and_api_team_finishes_with_every_cli_call_decided(
    tmp_path, monkeypatch
):
    from massgen import api

    run_dir = tmp_path / "run"  # the working directory: .massgen (the workspaces) goes here
    run_dir.mkdir()
    monkeypatch.chdir(run_dir)
    secret = tmp_path / "secret.txt"
    secret.write_text("NOT FOR THE CLIS")

    # Each turn, each CLI writes a new file inside its workspace (allowed; Claude Code
    # itself refuses to overwrite a file it has not read), then tries to read the secret
    # and to write beside it (refused: outside the workspace).
    def cc_calls(turn: int) -> list[tuple[str, dict[str, Any]]]:
        return [
            ("Write", {"file_path": f"cc_note_{turn}.txt", "content": "from claude code"}),
            ("Read", {"file_path": str(secret)}),
            ("Write", {"file_path": str(tmp_path / "cc_escape.txt"), "content": "escaped"}),
        ]

    def cx_calls(turn: int) -> list[tuple[str, dict[str, Any]]]:
        return [
            ("exec_command", {"cmd": f"echo made > cx_note_{turn}.txt"}),
            ("exec_command", {"cmd": f"cat {secret}"}),
            ("exec_command", {"cmd": patch(str(tmp_path / "cx_escape.txt"))}),
            ("exec_command", {"cmd": f"touch {tmp_path / 'cx_touched.txt'}"}),
        ]

    log_dir = tmp_path / "log"
    skip = (run_dir / ".massgen", log_dir)
    before = snapshot(tmp_path, skip)
    events: list[ev.AnyEvent] = []
    cc_made: list[str] = []
    cx_made: list[str] = []
    with (
        FakeAnthropic(coding_agent(cc_calls, cc_made, CC_PREFIX)) as claude,
        FakeResponses(coding_agent(cx_calls, cx_made)) as openai,
        FakeProvider(cooperative_agent) as other,
    ):
        config = {
            "agents": [
                {"id": "cc", "backend": {
                    "type": "claude_code", "cwd": "cc_ws", "base_url": claude.base_url,
                    "api_key": "sk-fake", "model": "claude-sonnet-4-5",
                    "request_timeout_seconds": TURN_SECONDS,
                }},
                {"id": "cx", "backend": {
                    "type": "codex", "cwd": "cx_ws", "base_url": openai.base_url,
                    "api_key": "sk-fake", "model": "gpt-5.1-codex",
                    "request_timeout_seconds": TURN_SECONDS,
                }},
                {"id": "api", "backend": {
                    "type": "chatcompletion", "base_url": other.base_url, "model": "m",
                }},
            ],
            "timeout_settings": {"orchestrator_timeout_seconds": RUN_SECONDS},
        }  # fmt: skip
        run = api.TeamRun(api.load(config), QUESTION, sinks=[events.append], log_dir=log_dir)
        result = await run.execute()
        claude_sent, codex_sent = json.dumps(claude.requests), json.dumps(openai.requests)
        sent = claude_sent + codex_sent
    after = snapshot(tmp_path, skip)

    # The team finished: all three answered, votes were cast, a winner presented.
    assert result.ok and result.winner in {"cc", "cx", "api"} and result.answer, result
    answered = {e.agent for e in events if isinstance(e, ev.AnswerPublished)}
    assert answered == {"cc", "cx", "api"}
    assert {e.agent for e in events if isinstance(e, ev.VoteCast)} >= {"cc", "cx"}

    # What the engine refused did not happen, and nothing outside the workspaces changed;
    # each CLI's model read why (the engine's reason), not a bare failure.
    assert "NOT FOR THE CLIS" not in sent
    for fake_requests in (claude_sent, codex_sent):
        assert f"read `{secret}` is refused" in fake_requests
    assert after == before
    notes = {p.name for p in (run_dir / ".massgen").rglob("*_note_1.txt")}
    assert notes == {"cc_note_1.txt", "cx_note_1.txt"}

    # Every tool call either CLI's model made was decided by the engine, in the ledger
    # (Codex reports a patch written in a command as its own apply_patch) and, in the same
    # order, in the run's events.
    records = ledger(log_dir)
    assert len(cc_made) >= 3 and len(cx_made) >= 4
    cc_records = [r["tool"] for r in records if r["agent"] == "cc"]
    assert sorted(cc_records) == sorted(cc_made), "a Claude Code call bypassed the engine"
    cx_records = [r["tool"] for r in records if r["agent"] == "cx"]
    assert len(cx_records) == len(cx_made), "a Codex call bypassed the engine"
    assert cx_records.count("apply_patch") == len(cx_made) // 4
    decided = [(e.agent, e.tool, e.allowed) for e in events if isinstance(e, ev.PermissionDecided)]
    assert decided == [(r["agent"], r["tool"], r["decision"] == "allow") for r in records]
    outcomes = {(r["agent"], r["tool"], r["decision"]) for r in records}
    assert ("cc", "Write", "allow") in outcomes and ("cc", "Write", "deny") in outcomes
    assert ("cx", "exec_command", "allow") in outcomes and ("cx", "apply_patch", "deny") in outcomes
