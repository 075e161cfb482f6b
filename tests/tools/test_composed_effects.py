"""`Toolboxes.effects`: a composition shows the permission engine what its boxes would do."""

from __future__ import annotations

import pytest

from massgen.core.effects import External, Read, Write
from massgen.core.toolbox import (
    UNKNOWN_SERVER,
    NoTools,
    Toolboxes,
    ToolContext,
    ToolResult,
    unknown_effects,
)
from massgen.core.types import ToolCall, ToolSpec


class Box:
    def __init__(self, name, effects=None):
        self.name, self._effects, self.asked = name, effects, []

    def specs(self):
        return (ToolSpec(self.name, "", {"type": "object", "properties": {}}),)

    async def call(self, call, ctx):
        return ToolResult(call.id, self.name)


class EffectfulBox(Box):
    def effects(self, call, ctx):
        self.asked.append(call.name)
        if call.arguments == "bad":
            raise ValueError("malformed")
        return self._effects


CTX = ToolContext(agent="a")


def test_effects_come_from_the_box_that_offers_the_name(tmp_path):
    first = EffectfulBox("read", [Read(tmp_path / "x")])
    shadowed = EffectfulBox("read", [Write(tmp_path / "y")])
    other = EffectfulBox("write", [Write(tmp_path / "z")])
    boxes = Toolboxes([first, shadowed, other])
    assert boxes.effects(ToolCall("1", "read", "{}"), CTX) == (Read(tmp_path / "x"),)
    assert boxes.effects(ToolCall("2", "write", "{}"), CTX) == (Write(tmp_path / "z"),)
    assert (first.asked, shadowed.asked, other.asked) == (["read"], [], ["write"])


class UnknownBox(Box):
    def effects(self, call, ctx):
        return unknown_effects(call)


def test_a_box_that_cannot_tell_is_external_and_unknown_names_have_none():
    boxes = Toolboxes([UnknownBox("mcp_time"), NoTools()])
    assert boxes.effects(ToolCall("1", "mcp_time", "{}"), CTX) == (
        External(UNKNOWN_SERVER, "mcp_time"),
    )
    assert boxes.effects(ToolCall("2", "nope", "{}"), CTX) == ()


def test_nested_compositions_and_malformed_arguments(tmp_path):
    inner = Toolboxes([EffectfulBox("read", [Read(tmp_path)])])
    outer = Toolboxes([UnknownBox("other"), inner])
    assert outer.effects(ToolCall("1", "read", "{}"), CTX) == (Read(tmp_path),)
    with pytest.raises(ValueError, match="malformed"):
        outer.effects(ToolCall("2", "read", "bad"), CTX)


async def test_file_tools_effects_seen_through_a_composition(tmp_path):
    from massgen.workspace.team import Workspaces

    ws = Workspaces(tmp_path / ".massgen", "r", {"a": "a_ws"})
    ctx = ToolContext(agent="a", workspace=ws.path("a"))
    boxes = Toolboxes([ws.files, Box("mcp_time")])
    call = ToolCall("1", "write_file", '{"path": "x.txt", "content": ""}')
    assert boxes.effects(call, ctx) == ws.files.effects(call, ctx)
    assert boxes.effects(call, ctx) == (Write(ws.path("a").resolve() / "x.txt"),)
