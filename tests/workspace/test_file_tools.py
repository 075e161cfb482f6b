"""The file tools: what they do, the peers' read-only view, and every way out refused."""

from __future__ import annotations

import json
import os

import pytest

from massgen.core.effects import Delete, Read, Write
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.workspace.team import Workspaces


@pytest.fixture
def ws(tmp_path):
    ws = Workspaces(tmp_path / ".massgen", "run1", {"alice": "alice_ws", "bob": "bob_ws"})
    (ws.path("bob") / "src").mkdir()
    (ws.path("bob") / "src" / "lib.py").write_text("def f():\n    return 1\n")
    (ws.path("bob") / "README").write_text("bob's notes\n")
    ws.published("bob", "agent2.1")
    return ws


def ctx(ws, agent="alice"):
    return ToolContext(agent=agent, workspace=ws.path(agent))


async def use(ws, name, agent="alice", **args):
    result = await ws.files.call(ToolCall("c1", name, json.dumps(args)), ctx(ws, agent))
    return result.content, result.is_error


def outside_state(tmp_path):
    return sorted(
        (str(p), p.read_bytes() if p.is_file() else b"")
        for p in tmp_path.rglob("*")
        if "alice_ws" not in p.parts and "snapshots" not in p.parts
    )


async def test_write_read_edit_list_glob_grep(ws):
    assert await use(ws, "write_file", path="pkg/app.py", content="x = 1\ny = 2\n") == (
        "Wrote pkg/app.py (12 bytes).",
        False,
    )
    assert await use(ws, "read_file", path="pkg/app.py") == ("x = 1\ny = 2\n", False)
    text, _ = await use(ws, "read_file", path="pkg/app.py", offset=2, limit=1)
    assert text == "y = 2\n\n[lines 2-2 of 2; use offset/limit for more]"
    assert await use(ws, "edit_file", path="pkg/app.py", old="y = 2", new="y = 3") == (
        "Edited pkg/app.py.",
        False,
    )
    assert (ws.path("alice") / "pkg" / "app.py").read_text() == "x = 1\ny = 3\n"
    assert await use(ws, "list_dir") == (
        "peers/  (read-only: other answers' files)\npkg/",
        False,
    )
    assert await use(ws, "glob", pattern="**/*.py") == ("pkg/app.py", False)
    assert await use(ws, "grep", pattern=r"y = \d") == ("pkg/app.py:2: y = 3", False)


async def test_edit_refuses_an_ambiguous_or_missing_match(ws):
    await use(ws, "write_file", path="a.txt", content="same same")
    text, error = await use(ws, "edit_file", path="a.txt", old="same", new="x")
    assert error and "occurs 2 times" in text
    text, error = await use(ws, "edit_file", path="a.txt", old="other", new="x")
    assert error and "does not occur" in text
    assert (ws.path("alice") / "a.txt").read_text() == "same same"


async def test_binary_files_are_refused_clearly(ws):
    (ws.path("alice") / "img.png").write_bytes(b"\x89PNG\x00\x00data")
    assert await use(ws, "read_file", path="img.png") == (
        "Error: `img.png` is a binary file (10 bytes); read_file reads text only.",
        True,
    )


async def test_peers_are_read_from_the_store_under_their_label(ws):
    assert await use(ws, "list_dir", path="peers") == ("agent2.1/", False)
    assert await use(ws, "list_dir", path="peers/agent2.1") == (
        "README  12 bytes\nsrc/",
        False,
    )
    assert await use(ws, "read_file", path="peers/agent2.1/src/lib.py") == (
        "def f():\n    return 1\n",
        False,
    )
    assert await use(ws, "grep", pattern="return", path="peers") == (
        "peers/agent2.1/src/lib.py:2:     return 1",
        False,
    )
    assert await use(ws, "glob", pattern="*.py", path="peers/agent2.1/src") == (
        "peers/agent2.1/src/lib.py",
        False,
    )
    # What peers see is the snapshot, not bob's directory as it is now.
    (ws.path("bob") / "src" / "lib.py").write_text("changed")
    text, _ = await use(ws, "read_file", path="peers/agent2.1/src/lib.py")
    assert text == "def f():\n    return 1\n"
    assert not (ws.path("alice") / "peers").exists()  # served, never copied


async def test_copy_from_peer_into_ones_own_workspace(ws):
    assert await use(ws, "copy_from_peer", source="peers/agent2.1/src") == (
        "Copied 1 file(s) to src.",
        False,
    )
    assert (ws.path("alice") / "src" / "lib.py").read_text() == "def f():\n    return 1\n"
    assert await use(ws, "copy_from_peer", source="peers/agent2.1/README", dest="notes/b.txt") == (
        "Copied 1 file(s) to notes/b.txt.",
        False,
    )
    assert (ws.path("alice") / "notes" / "b.txt").read_text() == "bob's notes\n"


@pytest.mark.parametrize("name", ["write_file", "edit_file", "delete_file"])
async def test_peers_snapshots_are_read_only(ws, name):
    args = {"path": "peers/agent2.1/README", "content": "x", "old": "bob", "new": "x"}
    text, error = await use(ws, name, **args)
    assert error and "read-only" in text


@pytest.mark.parametrize(
    "path",
    [
        "../bob_ws/README",
        "../../escape.txt",
        "/tmp/escape.txt",
        "peers/../../bob_ws/README",
        "escape_link/x.txt",
        "file_link",
    ],
)
@pytest.mark.parametrize("name", ["write_file", "edit_file", "delete_file", "read_file"])
async def test_nothing_outside_the_workspace_is_touched(ws, tmp_path, name, path):
    (ws.path("alice") / "escape_link").symlink_to(ws.path("bob"))
    (ws.path("alice") / "file_link").symlink_to(ws.path("bob") / "README")
    before = outside_state(tmp_path)
    args = {"path": path, "content": "pwned", "old": "bob", "new": "pwned"}
    text, error = await use(ws, name, **args)
    assert error and "outside your workspace" in text
    assert "alice_ws" not in text and str(tmp_path) not in text
    assert outside_state(tmp_path) == before
    assert not os.path.exists("/tmp/escape.txt")


async def test_copy_from_peer_cannot_write_outside_either(ws, tmp_path):
    before = outside_state(tmp_path)
    text, error = await use(ws, "copy_from_peer", source="peers/agent2.1/README", dest="../x")
    assert error and "outside your workspace" in text
    assert outside_state(tmp_path) == before


async def test_delete_refuses_a_file_neither_read_nor_created(ws):
    (ws.path("alice") / "old.txt").write_text("left from before")
    text, error = await use(ws, "delete_file", path="old.txt")
    assert error and "read it first" in text
    assert (ws.path("alice") / "old.txt").exists()
    await use(ws, "read_file", path="old.txt")
    assert await use(ws, "delete_file", path="old.txt") == ("Deleted old.txt.", False)
    await use(ws, "write_file", path="made.txt", content="mine")
    assert await use(ws, "delete_file", path="made.txt") == ("Deleted made.txt.", False)


async def test_read_before_delete_is_per_agent(ws):
    (ws.path("bob") / "x.txt").write_text("x")
    await use(ws, "read_file", path="x.txt", agent="bob")
    (ws.path("alice") / "x.txt").write_text("x")
    text, error = await use(ws, "delete_file", path="x.txt")
    assert error and "read it first" in text


async def test_grep_and_glob_results_are_bounded(ws):
    for i in range(150):
        (ws.path("alice") / f"f{i:03}.txt").write_text("hit\n")
    text, _ = await use(ws, "grep", pattern="hit")
    assert len(text.splitlines()) == 101 and text.endswith("narrow it down]")
    text, _ = await use(ws, "glob", pattern="*.txt")
    assert len(text.splitlines()) == 101


def test_each_call_declares_its_effects_as_resolved_paths(ws):
    root = ws.path("alice").resolve()
    c = ctx(ws)

    def effects(name, **args):
        return ws.files.effects(ToolCall("c", name, json.dumps(args)), c)

    assert effects("write_file", path="a/b.txt", content="") == (Write(root / "a" / "b.txt"),)
    assert effects("delete_file", path="x/../y") == (Delete(root / "y"),)
    assert effects("read_file", path="/etc/passwd") == (Read(ws.path("alice") / "/etc/passwd"),)
    lib = ws.snapshots()["agent2.1"].files["src/lib.py"]
    assert effects("read_file", path="peers/agent2.1/src/lib.py") == (
        Read(ws.store.object_path(lib.hash)),
    )
    assert effects("copy_from_peer", source="peers/agent2.1/src/lib.py") == (
        Read(ws.store.object_path(lib.hash)),
        Write(root / "src" / "lib.py"),
    )
    with pytest.raises(ValueError, match="missing argument"):
        effects("write_file", path="x")


async def test_an_agent_without_a_workspace_gets_a_clear_error(ws):
    call = ToolCall("c", "list_dir", "{}")
    result = await ws.files.call(call, ToolContext(agent="carol"))
    assert result.is_error and result.content == "Error: this agent has no workspace."
