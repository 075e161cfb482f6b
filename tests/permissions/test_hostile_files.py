"""Issue #26's attacks on the file tools, as an attacker drives them: links that point out
of the workspace, a directory swapped for a link while writes run, secrets in a context
path, a context path that holds HOME, a FIFO, a 3 GB sparse file.

A fake HOME holds canary secrets (the real HOME is never touched); after each attack no
canary is in any tool result and nothing outside the workspace changed. Every test runs
with the kernel's `openat2` and with the component-by-component walk.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import resource
import threading
import time
from pathlib import Path

import pytest
from hostile_corpus import Tree

from massgen.config.schema import ContextPathConfig
from massgen.core.effects import Read
from massgen.core.errors import ConfigError
from massgen.core.toolbox import Toolboxes, ToolContext, ToolResult
from massgen.core.types import ToolCall
from massgen.permissions.engine import Book, Call, Engine
from massgen.permissions.guarded import Guarded
from massgen.permissions.ledger import Ledger
from massgen.permissions.risk import Zones
from massgen.permissions.sandbox import NoSandbox, select_sandbox
from massgen.runs.wiring import zones_of
from massgen.workspace.commands import CommandToolbox
from massgen.workspace.context import ContextPaths
from massgen.workspace.runner import Limits
from massgen.workspace.team import Workspaces

CANARY = "canary-7d1f-never-shown"


@pytest.fixture
def tree(tmp_path, monkeypatch, open_way):  # every test runs with openat2 and the walk
    t = Tree(tmp_path).enter(monkeypatch)
    for rel in (".ssh/id_rsa", ".config/massgen/.env", ".git-credentials",
                ".config/gh/hosts.yml"):  # fmt: skip
        (t.home / rel).parent.mkdir(parents=True, exist_ok=True)
        (t.home / rel).write_text(f"{rel}={CANARY}\n")
    (t.home / ".bashrc").write_text("export PS1='$ '\n")
    (t.outside / "secret.txt").write_text(f"{CANARY}\n")
    return t


def team(tree: Tree, contexts: ContextPaths | None = None, phase: str = "coordination"):
    ws = Workspaces(tree.project / ".massgen", "run1", {"alice": "ws"}, contexts=contexts)
    engine = Engine(default_book=Book(), ledger=Ledger(None))
    box = Guarded(Toolboxes([ws.files]), engine, zones_of(ws))
    return box, ToolContext("alice", workspace=ws.path("alice"), phase=phase)  # type: ignore[arg-type]


async def call(box, ctx, name: str, **args) -> ToolResult:
    return await box.call(ToolCall("c", name, json.dumps(args)), ctx)


def outside_files(tree: Tree) -> dict[str, bytes]:
    return tree.snapshot()  # everything outside the project's .massgen, with its bytes


# --- attack 1: links in the workspace ---------------------------------------------------


async def test_links_in_the_workspace_give_nothing_to_grep_glob_list_or_read(tree):
    box, ctx = team(tree)
    ws = ctx.workspace
    (ws / "k1").symlink_to(tree.home / ".ssh" / "id_rsa")
    (ws / "k2").symlink_to(tree.home / ".config" / "massgen" / ".env")
    (ws / "notes.txt").write_text("my own notes\n")
    results = [
        await call(box, ctx, "grep", pattern=".", path="."),
        await call(box, ctx, "glob", pattern="**/*"),
        await call(box, ctx, "list_dir", path="."),
        await call(box, ctx, "read_file", path="k1"),
    ]
    (ws / "door").symlink_to(tree.outside, target_is_directory=True)
    results += [
        await call(box, ctx, "grep", pattern="canary", path="."),
        await call(box, ctx, "glob", pattern="**/*"),
        await call(box, ctx, "read_file", path="door/secret.txt"),
    ]
    for result in results:
        assert CANARY not in result.content, result.content
    assert "notes.txt:1: my own notes" in results[0].content  # the tools still work
    assert "door/secret.txt" not in results[5].content  # a linked directory is not entered


# --- attack 2: a directory swapped for a link while writes run --------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _swapper(a: Path, b: Path, stop: threading.Event) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    pa, pb = os.fsencode(a), os.fsencode(b)
    while not stop.is_set():
        if libc.renameat2(_AT_FDCWD, pa, _AT_FDCWD, pb, _RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")


async def test_writes_and_reads_during_a_directory_link_swap_stay_in_the_workspace(tree):
    box, ctx = team(tree)
    ws = ctx.workspace
    (ws / "d").mkdir()
    (ws / "d" / "secret.txt").write_text("harmless\n")
    (ws / "s").symlink_to(tree.home, target_is_directory=True)
    (tree.home / "secret.txt").write_text(f"{CANARY}\n")
    before = outside_files(tree)
    stop = threading.Event()
    swapper = threading.Thread(target=_swapper, args=(ws / "d", ws / "s", stop), daemon=True)
    swapper.start()
    try:
        calls = []
        for i in range(150):
            calls.append(call(box, ctx, "write_file", path="d/.bashrc", content=f"pwned {i}\n"))
            calls.append(call(box, ctx, "write_file", path=f"d/new{i}/x.txt", content="pwned\n"))
            if i % 5 == 0:
                calls.append(call(box, ctx, "read_file", path="d/secret.txt"))
                calls.append(call(box, ctx, "grep", pattern=".", path="d"))
        results = await asyncio.gather(*calls)
    finally:
        stop.set()
        swapper.join(5)
    for result in results:
        assert CANARY not in result.content, result.content
    assert outside_files(tree) == before  # not ~/.bashrc, no new file, no `.tmp-*` left
    assert sorted(p.name for p in tree.home.iterdir()) == sorted(
        [".config", ".ssh", ".git-credentials", ".bashrc", "secret.txt"]
    )
    assert any(not r.is_error for r in results if "Wrote" in r.content)  # some got through


# --- attacks 3 and 4: secrets in a context path, a context path holding HOME ------------


def _repo(tree: Tree) -> Path:
    repo = tree.root / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "app.py").write_text("print('app')\n")
    (repo / ".env").write_text(f"API_KEY={CANARY}\n")
    (repo / "sub" / ".env.local").write_text(f"DB_PASSWORD={CANARY}\n")
    (repo / "server.pem").write_text(f"-----BEGIN PRIVATE KEY-----\n{CANARY}\n")
    (repo / ".env.example").write_text("API_KEY=\n")
    return repo


async def test_the_file_tools_never_return_a_context_paths_secrets(tree):
    repo = _repo(tree)
    contexts = ContextPaths.of([ContextPathConfig(path=str(repo))])
    box, ctx = team(tree, contexts)
    grep = await call(box, ctx, "grep", pattern=".", path=str(repo))
    glob = await call(box, ctx, "glob", pattern="**/*", path=str(repo))
    listing = await call(box, ctx, "list_dir", path=str(repo))
    reads = [await call(box, ctx, "read_file", path=str(repo / n))
             for n in (".env", "sub/.env.local", "server.pem")]  # fmt: skip
    assert "print('app')" in grep.content and ".env.example" in glob.content
    for result in (grep, glob, listing, *reads):
        assert CANARY not in result.content, result.content
    assert "left out 3 secret file(s)" in grep.content, grep.content
    assert "server.pem" in grep.content  # named, so the model knows why
    assert all(r.is_error for r in reads)


def _sandboxes() -> list:
    kinds = []
    for mode in ("bubblewrap", "landlock"):
        found = select_sandbox(mode)  # type: ignore[arg-type]
        reason = found.reason if isinstance(found, NoSandbox) else ""
        kinds.append(pytest.param(mode, marks=pytest.mark.skipif(bool(reason), reason=reason)))
    return kinds


@pytest.mark.parametrize("mode", _sandboxes())
async def test_a_command_cannot_read_a_context_paths_secrets(tree, mode):
    repo = _repo(tree)
    sandbox = select_sandbox(mode)  # type: ignore[arg-type]
    assert not isinstance(sandbox, NoSandbox)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tree.home)}
    box = CommandToolbox(Limits(20), None, env, sandbox, (repo,))
    ws = tree.project / ".massgen" / "ws"
    ws.mkdir(parents=True)
    # Landlock cannot let a directory holding a hidden file be listed: `grep -r` fails there.
    command = (f"cat {repo}/app.py; grep -r . {repo}; cat {repo}/.env {repo}/server.pem "
               f"{repo}/sub/.env.local; tar c -C {repo} . | strings")  # fmt: skip
    result = await box.call(
        ToolCall("c", "execute_command", json.dumps({"command": command})),
        ToolContext("a", workspace=ws),
    )
    assert "print('app')" in result.content, result.content
    assert CANARY not in result.content, result.content


async def test_a_context_path_that_holds_home_is_refused_with_the_reason(tree):
    with pytest.raises(ConfigError) as caught:
        ContextPaths.of([ContextPathConfig(path=str(tree.root))])
    message = str(caught.value)
    assert "holds your home directory" in message and "context_paths[0]" in message
    with pytest.raises(ConfigError):
        ContextPaths.of([ContextPathConfig(path=str(tree.home))])


async def test_credentials_under_a_context_path_are_never_read(tree, monkeypatch):
    # HOME moved elsewhere: the old home is now just a directory in a context path.
    monkeypatch.setenv("HOME", str(tree.root / "elsewhere"))
    contexts = ContextPaths.of([ContextPathConfig(path=str(tree.home))])
    box, ctx = team(tree, contexts)
    results = [
        await call(box, ctx, "grep", pattern=".", path=str(tree.home)),
        await call(box, ctx, "read_file", path=str(tree.home / ".git-credentials")),
        await call(box, ctx, "read_file", path=str(tree.home / ".ssh" / "id_rsa")),
    ]
    for result in results:
        assert CANARY not in result.content, result.content
    assert results[1].is_error and results[2].is_error
    assert ".ssh/id_rsa" not in results[0].content.split("[left out")[0]


async def test_a_context_path_holding_the_project_keeps_workspace_writes_working(tree):
    (tree.project / "src.py").write_text("x = 1\n")
    contexts = ContextPaths.of([ContextPathConfig(path=str(tree.project), permission="write")])
    box, ctx = team(tree, contexts)
    written = await call(box, ctx, "write_file", path="out.txt", content="made\n")
    assert not written.is_error, written.content
    assert (ctx.workspace / "out.txt").read_text() == "made\n"
    logs = tree.project / ".massgen" / "log"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "events.jsonl").write_text(f"{CANARY}\n")
    read = await call(box, ctx, "read_file", path=str(logs / "events.jsonl"))
    grep = await call(box, ctx, "grep", pattern=".", path=str(tree.project))
    assert read.is_error and CANARY not in read.content
    assert CANARY not in grep.content and "src.py:1: x = 1" in grep.content


# --- attack 6 and the sparse file: what cannot be read is refused at once ---------------


async def test_a_fifo_is_refused_at_once_not_waited_on(tree):
    box, ctx = team(tree)
    fifo = ctx.workspace / "f"
    os.mkfifo(fifo)
    try:
        started = time.monotonic()
        read = await asyncio.wait_for(call(box, ctx, "read_file", path="f"), 5)
        grep = await asyncio.wait_for(call(box, ctx, "grep", pattern=".", path="."), 5)
        edit = await asyncio.wait_for(call(box, ctx, "edit_file", path="f", old="a", new="b"), 5)
        assert time.monotonic() - started < 5
        assert read.is_error and "not a regular file" in read.content, read.content
        assert edit.is_error and not grep.is_error
    finally:  # on a tool that blocks, a writer lets its open return so the test can end
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


async def test_a_3gb_sparse_file_is_refused_without_reading_it(tree):
    box, ctx = team(tree)
    with open(ctx.workspace / "big.txt", "wb") as f:
        f.truncate(3 * 1024**3)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    read = await call(box, ctx, "read_file", path="big.txt")
    edit = await call(box, ctx, "edit_file", path="big.txt", old="a", new="b")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak
    assert read.is_error and "3,221,225,472 bytes" in read.content, read.content
    assert edit.is_error
    assert grown < 200 * 1024, f"the peak memory grew by {grown} KiB"


# --- peers' snapshots ------------------------------------------------------------------


async def test_a_peers_snapshot_gives_no_secret_and_no_linked_file(tree):
    ws = Workspaces(tree.project / ".massgen", "run1", {"alice": "wa", "bob": "wb"})
    engine = Engine(default_book=Book(), ledger=Ledger(None))
    box = Guarded(Toolboxes([ws.files]), engine, zones_of(ws))
    bob = ws.path("bob")
    (bob / "app.py").write_text("print('bob')\n")
    (bob / ".env").write_text(f"KEY={CANARY}\n")
    (bob / "k1").symlink_to(tree.home / ".ssh" / "id_rsa")
    ws.published("bob", "bob.1")
    alice = ToolContext("alice", workspace=ws.path("alice"))
    results = [
        await call(box, alice, "grep", pattern=".", path="peers"),
        await call(box, alice, "read_file", path="peers/bob.1/.env"),
        await call(box, alice, "read_file", path="peers/bob.1/k1"),
        await call(box, alice, "copy_from_peer", source="peers/bob.1", dest="copy"),
    ]
    for result in results:
        assert CANARY not in result.content, result.content
    assert "peers/bob.1/app.py:1: print('bob')" in results[0].content
    assert "left out 1 secret file(s)" in results[0].content
    assert results[1].is_error and results[2].is_error
    assert "Left out 1 secret file(s)" in results[3].content
    assert sorted(p.name for p in (alice.workspace / "copy").iterdir()) == ["app.py"]


async def test_the_engine_knows_every_secret_the_sandbox_hides(tree):
    """Attack 4's reads, put to the engine with HOME inside a readable zone."""
    engine = Engine(default_book=Book(), ledger=Ledger(None))
    zones = Zones(workspace=tree.project / "ws", readable=(tree.root,))
    for rel in (".git-credentials", ".config/gh/hosts.yml", ".ssh/id_rsa", ".netrc",
                ".aws/credentials", ".config/gcloud/credentials.db", ".azure/msal.json",
                ".config/massgen/.env"):  # fmt: skip
        decision = await engine.decide(Call("a", "read_file", (Read(tree.home / rel),), zones))
        assert not decision.allowed and "secrets are never opened" in decision.reason, rel
    for rel in ("repo/server.pem", "repo/tls.key", "repo/.env.local"):
        decision = await engine.decide(Call("a", "read_file", (Read(tree.root / rel),), zones))
        assert not decision.allowed, rel
    fine = await engine.decide(Call("a", "read_file", (Read(tree.root / "a.txt"),), zones))
    assert fine.allowed


SWAP = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
end = time.monotonic() + float(sys.argv[1])
n = 0
while time.monotonic() < end:
    if libc.renameat2(-100, b"d", -100, b"s", 2) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    n += 1
print("swapped", n)
"""


@pytest.mark.parametrize("mode", _sandboxes())
async def test_a_sandboxed_swapper_does_not_lead_writes_out(tree, mode):
    """Attack 2 as the model would run it: the swap loop is a command of the agent's."""
    sandbox = select_sandbox(mode)  # type: ignore[arg-type]
    assert not isinstance(sandbox, NoSandbox)
    box, ctx = team(tree)
    commands = CommandToolbox(Limits(30), None, {"PATH": "/usr/bin:/bin"}, sandbox)
    ws = ctx.workspace
    (ws / "d").mkdir()
    (ws / "s").symlink_to(tree.home, target_is_directory=True)
    (ws / "swap.py").write_text(SWAP)
    before = outside_files(tree)
    script = json.dumps({"command": "python3 swap.py 3"})
    swapping = asyncio.ensure_future(commands.call(ToolCall("s", "execute_command", script), ctx))
    await asyncio.sleep(0.5)  # the loop has started
    writes = [call(box, ctx, "write_file", path="d/.bashrc", content="pwned\n") for _ in range(100)]
    results = await asyncio.gather(*writes)
    swapped = await swapping
    assert "swapped" in swapped.content, swapped.content
    assert outside_files(tree) == before
    assert any(not r.is_error for r in results)
