"""Context paths: readable by all, writable by the final presenter only where permitted,
every escape (absolute, `..`, symlink, protected path) refused during coordination with
nothing changed on disk, and the listed changes equal to what changed on disk."""

from __future__ import annotations

import hashlib
import json

import pytest
from workspace_agents import presenter_writes

from massgen.api import TeamRun
from massgen.config.schema import ContextPathConfig
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.runs.loading import load
from massgen.testing import FakeProvider
from massgen.testing.teams import workspace_agents
from massgen.workspace.context import ContextPaths
from massgen.workspace.team import Workspaces


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    (site / "secret").mkdir(parents=True)
    (site / "index.html").write_text("<h1>hi</h1>\n")
    (site / "secret" / "keys.txt").write_text("k\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("guide\n")
    return site


def team(tmp_path, site, permission="write"):
    contexts = ContextPaths.of(
        [
            ContextPathConfig(path=str(site), permission=permission, protected_paths=("secret",)),
            ContextPathConfig(path=str(tmp_path / "docs")),
        ]
    )
    contexts.baseline()
    ws = Workspaces(tmp_path / ".massgen", "r", {"alice": "alice_ws"}, contexts=contexts)
    ws.path("alice").joinpath("link").symlink_to(site)
    return ws


async def use(ws, name, phase="coordination", **args):
    ctx = ToolContext(agent="alice", phase=phase, workspace=ws.path("alice"))
    result = await ws.files.call(ToolCall("c", name, json.dumps(args)), ctx)
    return result.content, result.is_error


def hashes(*roots):
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


async def test_every_agent_reads_context_paths_by_absolute_path(tmp_path, site):
    ws = team(tmp_path, site)
    assert await use(ws, "read_file", path=str(site / "index.html")) == ("<h1>hi</h1>\n", False)
    assert await use(ws, "read_file", path="link/index.html") == ("<h1>hi</h1>\n", False)
    text, error = await use(ws, "glob", pattern="**/*.md", path=str(tmp_path / "docs"))
    assert (text, error) == (f"{tmp_path / 'docs'}/guide.md", False)
    assert str(site) in ws.files.specs()[0].description
    text, error = await use(ws, "read_file", path=str(tmp_path / "elsewhere.txt"))
    assert error and "outside your workspace" in text


@pytest.mark.parametrize(
    "how",
    ["absolute", "dotdot", "symlink", "protected"],
)
@pytest.mark.parametrize("tool", ["write_file", "edit_file", "delete_file"])
async def test_coordination_writes_are_refused_and_nothing_changes(tmp_path, site, how, tool):
    ws = team(tmp_path, site)
    raw = {
        "absolute": str(site / "index.html"),
        "dotdot": "../../../../site/index.html",
        "symlink": "link/index.html",
        "protected": str(site / "secret" / "keys.txt"),
    }[how]
    assert (ws.path("alice") / raw).resolve().is_relative_to(site)
    before = hashes(tmp_path / "site", tmp_path / "docs")
    await use(ws, "read_file", path=raw)  # so read-before-delete is not what refuses
    args = {"write_file": {"content": "x"}, "edit_file": {"old": "h", "new": "X"}}.get(tool, {})
    text, error = await use(ws, tool, path=raw, **args)
    assert error
    assert "read-only while agents coordinate" in text and text.startswith(f"Error: `{raw}`")
    assert hashes(tmp_path / "site", tmp_path / "docs") == before
    assert not ws.contexts.changes()


async def test_the_presenter_writes_only_where_permitted(tmp_path, site):
    ws = team(tmp_path, site)
    before = hashes(site, tmp_path / "docs")
    ok = await use(ws, "write_file", "presentation", path=str(site / "report.md"), content="r")
    assert ok == (f"Wrote {site / 'report.md'} (1 bytes).", False)
    assert not (
        await use(ws, "edit_file", "presentation", path="link/index.html", old="hi", new="hello")
    )[1]
    same = await use(
        ws, "write_file", "presentation", path=str(tmp_path / "docs" / "guide.md"), content="x"
    )
    assert same[1] and "`permission: read`" in same[0]
    prot = await use(ws, "write_file", "presentation", path="link/secret/keys.txt", content="x")
    assert prot[1] and "protected" in prot[0]
    git = await use(
        ws, "write_file", "presentation", path=str(site / ".git" / "config"), content="x"
    )
    assert git[1] and "protected" in git[0]

    after = hashes(site, tmp_path / "docs")
    changes = ws.contexts.changes()
    created = sorted(set(after) - set(before))
    modified = sorted(p for p in set(after) & set(before) if after[p] != before[p])
    assert (list(changes.created), list(changes.modified)) == (created, modified)
    assert created == [str(site / "report.md")] and modified == [str(site / "index.html")]


async def test_a_rewrite_with_the_same_bytes_is_no_change_and_a_delete_is_listed(tmp_path, site):
    ws = team(tmp_path, site)
    index = str(site / "index.html")
    await use(ws, "write_file", "presentation", path=index, content="<h1>hi</h1>\n")
    await use(ws, "read_file", "presentation", path="link/secret/../index.html")
    assert await use(ws, "delete_file", "presentation", path=index) == (f"Deleted {index}.", False)
    (site / "by_a_command.txt").write_text("c")  # not through the file tools: seen by stat
    changes = ws.contexts.changes()
    assert changes.deleted == (index,)
    assert changes.created == (str(site / "by_a_command.txt"),)
    assert changes.modified == ()


def presenter_writes_report(site):
    # Every agent first tries to write into the context path (refused while coordinating).
    attempt = ("write_file", {"path": str(site / "index.html"), "content": "x"})
    return presenter_writes(attempt, site / "REPORT.md", "# Report\n", "Final: wrote REPORT.md.")


async def test_a_run_lists_exactly_what_it_changed(tmp_path, site, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = hashes(site)
    with FakeProvider(presenter_writes_report(site)) as fake:
        agents = workspace_agents(fake.base_url, ("alice", "bob"))
        config = {
            "agents": agents,
            "orchestrator": {
                "seed": 1,
                "max_new_answers_per_agent": 1,
                "context_paths": [{"path": "site", "permission": "write"}],
            },
        }
        result = await TeamRun(load(config), "Report on the site.").execute()
        refused = [
            m["content"]
            for r in fake.requests
            for m in r["messages"]
            if m["role"] == "tool" and "read-only while agents coordinate" in m["content"]
        ]

    assert result.ok, result.reason
    assert refused  # the coordination write was tried, and refused
    after = hashes(site)
    changed = sorted(p for p in after if before.get(p) != after[p])
    assert changed == [str(site.resolve() / "REPORT.md")]
    assert list(result.context_changes.created) == changed
    assert result.context_changes.modified == result.context_changes.deleted == ()
    logged = json.loads((result.log_dir / "context_changes.json").read_text())
    assert logged == {"created": changed, "modified": [], "deleted": []}
