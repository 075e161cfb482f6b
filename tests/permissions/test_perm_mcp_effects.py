"""MCP tools are external calls; only a trusted server's annotations make one read-only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from perm_helpers import Scripted

from massgen.config.schema import MassgenConfig
from massgen.core.effects import External
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.engine import Book, Engine
from massgen.permissions.guarded import Guarded
from massgen.permissions.policy import PolicyApprover
from massgen.permissions.risk import Zones
from massgen.tools.mcp import open_team

pytest.importorskip("mcp")

LIAR = str(Path(__file__).with_name("liar_server.py"))
CTX = ToolContext("a")


def config(trusted: bool) -> MassgenConfig:
    server = {"command": sys.executable, "args": [LIAR], "trusted": trusted}
    backend = {"type": "chatcompletion", "mcp_servers": {"liar": server}}
    return MassgenConfig.model_validate({"agents": [{"id": "a", "backend": backend}]})


async def test_an_untrusted_server_that_claims_read_only_is_asked_and_refused(tmp_path):
    victim = tmp_path / "victim.txt"
    call = ToolCall("c1", "mcp__liar__peek", json.dumps({"path": str(victim)}))
    async with open_team(config(trusted=False), log_dir=tmp_path, warn=pytest.fail) as boxes:
        box = boxes["a"]
        # read_only=False: its hint is not believed
        assert box.effects(call, CTX) == (External("liar", "peek", untrusted_server=True),)
        approver = Scripted()  # a person who says no
        engine = Engine(approver=approver)
        result = await Guarded(box, engine, lambda ctx: Zones()).call(call, CTX)
        assert result.is_error and "refused by the permission engine" in result.content
        assert len(approver.asked) == 1 and approver.asked[0].risk == "high"
        headless = Engine(approver=PolicyApprover("deny-all"))
        assert (await Guarded(box, headless, lambda ctx: Zones()).call(call, CTX)).is_error
    assert not victim.exists()
    assert engine.ledger.records[-1]["decision"] == "deny"


async def test_headless_the_default_policy_denies_an_untrusted_servers_tool(tmp_path):
    """Asking nobody does not mean yes (issue #26): the default headless policy
    (risk-based) denies it, and the refusal says how to allow the server."""
    victim = tmp_path / "victim.txt"
    call = ToolCall("c1", "mcp__liar__peek", json.dumps({"path": str(victim)}))
    async with open_team(config(trusted=False), log_dir=tmp_path, warn=pytest.fail) as boxes:
        headless = Engine(approver=PolicyApprover("risk-based"))
        result = await Guarded(boxes["a"], headless, lambda ctx: Zones()).call(call, CTX)
    assert result.is_error and "refused by the permission engine" in result.content
    assert "mcp__liar__*" in result.content and "trusted: true" in result.content
    assert not victim.exists()


async def test_headless_a_rule_that_allows_the_server_lets_its_tools_run(tmp_path):
    victim = tmp_path / "victim.txt"
    call = ToolCall("c1", "mcp__liar__peek", json.dumps({"path": str(victim)}))
    async with open_team(config(trusted=False), log_dir=tmp_path, warn=pytest.fail) as boxes:
        book = Book.of(allow=["mcp__liar__*"], project=tmp_path)
        headless = Engine(default_book=book, approver=PolicyApprover("risk-based"))
        result = await Guarded(boxes["a"], headless, lambda ctx: Zones()).call(call, CTX)
    assert result.content == "looked"
    assert victim.read_text() == "pwned"


async def test_a_trusted_servers_read_only_tool_runs_without_asking(tmp_path):
    async with open_team(config(trusted=True), log_dir=tmp_path, warn=pytest.fail) as boxes:
        call = ToolCall("c1", "mcp__liar__peek", json.dumps({"path": str(tmp_path / "x")}))
        assert boxes["a"].effects(call, CTX) == (External("liar", "peek", read_only=True),)
        approver = Scripted()
        engine = Engine(approver=approver)
        result = await Guarded(boxes["a"], engine, lambda ctx: Zones()).call(call, CTX)
        assert result.content == "looked" and approver.asked == []
        assert engine.ledger.records[-1]["operator"] == "rule"
