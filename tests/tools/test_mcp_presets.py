"""The MCP presets on the loopback fake provider: their servers start once per run,
and their stderr logs land in the run's log dir (orphans: test_mcp.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from massgen import api
from massgen.cli import main
from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent

pytest.importorskip("mcp")


pytestmark = pytest.mark.usefixtures("in_tmp")


@pytest.mark.parametrize("preset", ["mcp_time", "mcp_custom", "mcp_two_servers"])
async def test_preset_runs_with_its_servers_logged(preset, monkeypatch, tmp_path):
    pytest.importorskip("mcp_server_time")
    with FakeProvider(cooperative_agent) as fake:
        monkeypatch.setenv("MASSGEN_BASE_URL", fake.base_url)
        result = await api.arun("What time is it?", f"@examples/tools/{preset}")
    assert result.ok
    logs = sorted(p.name for p in (result.log_dir / "mcp").iterdir())
    assert logs and all(name.endswith(".stderr.log") for name in logs)


def _tokyo_agent(request: dict[str, Any]) -> Reply:
    """Calls the time tool first, then answers with what it said."""
    messages = request.get("messages") or []
    results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
    tools = {t["function"]["name"] for t in request.get("tools") or []}
    if "mcp__time__get_current_time" in tools and not results:
        return Reply(tool_calls=[("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})])
    if results and "new_answer" in tools:
        return Reply(tool_calls=[("new_answer", {"content": f"In Tokyo: {results[-1]}"})])
    return cooperative_agent(request)


def test_what_time_is_it_in_tokyo(monkeypatch, capsys):
    pytest.importorskip("mcp_server_time")
    with FakeProvider(_tokyo_agent) as fake:
        monkeypatch.setenv("MASSGEN_BASE_URL", fake.base_url)
        code = main(["--config", "@examples/tools/mcp_time", "What time is it in Tokyo?"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Asia/Tokyo" in out and "+09:00" in out
    assert json.dumps("mcp__time__get_current_time")[1:-1] in out


def test_every_preset_says_how_its_mcp_servers_run_headless():
    """A run nobody watches denies an untrusted server's tools (issue #26): every shipped
    preset that uses MCP marks its servers `trusted: true` or allows them by rule, and
    says so in its comments."""
    from pathlib import Path

    from massgen.runs.loading import load

    configs = Path(__file__).resolve().parents[2] / "configs"
    presets = [p for p in configs.rglob("*.yaml") if "mcp_servers" in p.read_text()]
    assert presets
    for preset in presets:
        config = load(str(preset)).config
        allowed = set(config.permissions.rules.allow) if config.permissions else set()
        for agent in config.agents:
            for server in agent.backend.mcp_servers:
                assert server.trusted or f"mcp__{server.name}__*" in allowed, (preset, server)
        assert "nobody watches" in preset.read_text(), preset
