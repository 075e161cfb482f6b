"""The hostile corpus through `Guarded` over the real file and command tools: every call
is refused, recorded in the ledger, and nothing outside the workspace changes."""

from __future__ import annotations

import json
import os

import pytest
from hostile_corpus import Tree, corpus
from perm_helpers import Scripted

from massgen.core.toolbox import Toolboxes, ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.approval import Choice
from massgen.permissions.engine import Book, Engine
from massgen.permissions.guarded import Guarded
from massgen.permissions.ledger import Ledger
from massgen.runs.wiring import zones_of
from massgen.workspace.commands import CommandToolbox
from massgen.workspace.runner import Limits
from massgen.workspace.team import Workspaces


@pytest.fixture
def tree(tmp_path, monkeypatch):
    return Tree(tmp_path).enter(monkeypatch)


def guarded(tree: Tree, approver=None, book: Book | None = None):
    ws = Workspaces(tree.project / ".massgen", "run1", {"alice": "ws"})
    engine = Engine(default_book=book or Book(), approver=approver,
                    ledger=Ledger(tree.project / ".massgen" / "log" / "permissions.jsonl"))  # fmt: skip
    box = Guarded(Toolboxes([ws.files, CommandToolbox(Limits(5))]), engine, zones_of(ws))
    return box, engine, ToolContext("alice", workspace=ws.path("alice"))


async def test_every_hostile_call_is_refused_and_recorded(tree):
    before = tree.snapshot()
    box, engine, ctx = guarded(tree)
    calls = corpus(tree)
    for index, (name, args, why) in enumerate(calls):
        result = await box.call(ToolCall(f"c{index}", name, json.dumps(args)), ctx)
        assert result.is_error and "refused by the permission engine" in result.content, why
        assert "do not try to work around it" in result.content
    records = engine.ledger.records
    assert [r["call_id"] for r in records] == [f"c{i}" for i in range(len(calls))]
    assert all(r["decision"] == "deny" for r in records)
    assert tree.snapshot() == before
    on_disk = (tree.project / ".massgen" / "log" / "permissions.jsonl").read_text().splitlines()
    assert len(on_disk) == len(calls)


async def test_links_already_in_the_workspace_lead_nowhere(tree):
    box, engine, ctx = guarded(tree)
    secret, target = tree.outside / "secret.txt", tree.outside / "target.txt"
    (ctx.workspace / "soft").symlink_to(secret)
    (ctx.workspace / "soft_target").symlink_to(target)
    (ctx.workspace / "dir").symlink_to(tree.outside)
    os.link(secret, ctx.workspace / "hard")
    before = tree.snapshot()
    attempts = [
        ("read_file", {"path": "soft"}),
        ("read_file", {"path": "dir/secret.txt"}),
        ("read_file", {"path": "hard"}),
        ("write_file", {"path": "soft_target", "content": "pwned"}),
        ("write_file", {"path": "hard", "content": "pwned"}),
        ("execute_command", {"command": "cat hard"}),
        ("execute_command", {"command": "cat soft"}),
        ("execute_command", {"command": "echo pwned > soft_target"}),
    ]
    for name, args in attempts:
        result = await box.call(ToolCall("c", name, json.dumps(args)), ctx)
        assert "refused by the permission engine" in result.content, (name, args, result)
    assert tree.snapshot() == before
    assert len(engine.ledger.records) == len(attempts)


async def test_a_symlink_swapped_in_after_the_check_is_not_followed(tree):
    """The approver is asked after paths are resolved; it swaps the checked file for a
    symlink to a secret before answering yes. The tool resolves again when it opens."""
    (tree.project / ".massgen").mkdir(exist_ok=True)

    class Swapper(Scripted):
        async def ask(self, request):
            victim = ctx.workspace / "notes.txt"
            victim.unlink()
            victim.symlink_to(tree.outside / "secret.txt")
            return Choice.ONCE

    box, engine, ctx = guarded(tree, Swapper(), Book.of(ask=["Read(**/notes.txt)"]))
    (ctx.workspace / "notes.txt").write_text("mine\n")
    result = await box.call(ToolCall("c", "read_file", '{"path": "notes.txt"}'), ctx)
    assert result.is_error and "the outside secret" not in result.content
    assert engine.ledger.records[-1]["operator"] == "human"  # approved, then refused at use


async def test_malformed_arguments_are_refused_and_recorded(tree):
    box, engine, ctx = guarded(tree)
    result = await box.call(ToolCall("c", "read_file", "{not json"), ctx)
    assert result.is_error and "cannot be checked" in result.content
    assert engine.ledger.records[-1]["operator"] == "error"


async def test_links_reached_by_cd_or_a_glob_are_checked(tree):
    box, _, ctx = guarded(tree)
    (ctx.workspace / "src").mkdir()
    (ctx.workspace / "src" / "out").symlink_to(tree.outside / "target.txt")
    (ctx.workspace / "src" / "sec").symlink_to(tree.outside / "secret.txt")
    before = tree.snapshot()
    for command in (
        "cd src && echo pwned > out",
        "cd src && cat sec",
        "cat src/*",
        "cat */s*",
        "cd && ls",
    ):
        result = await box.call(
            ToolCall("c", "execute_command", json.dumps({"command": command})), ctx
        )
        assert "refused by the permission engine" in result.content, (command, result)
    assert tree.snapshot() == before
    ok = await box.call(ToolCall("c", "execute_command", '{"command": "cd src && ls"}'), ctx)
    assert not ok.is_error and "out" in ok.content
