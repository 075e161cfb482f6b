"""Snapshots into the content-addressed store: stored once, what is left out, restarts."""

from __future__ import annotations

import os
import time

from massgen.workspace import store as store_module
from massgen.workspace.store import Limits, Snapshotter, Store
from massgen.workspace.team import Workspaces


def objects(store: Store) -> list[str]:
    return sorted(p.name for p in (store.root / "objects").rglob("*") if p.is_file())


def test_an_unchanged_file_is_stored_once_across_agents_and_rounds(tmp_path):
    ws = Workspaces(tmp_path, "run1", {"alice": "a", "bob": "b"})
    (ws.path("alice") / "same.txt").write_text("shared")
    (ws.path("bob") / "same.txt").write_text("shared")
    ws.published("alice", "agent1.1")
    ws.published("bob", "agent2.1")
    (ws.path("alice") / "new.txt").write_text("more")
    ws.published("alice", "agent1.2")
    assert len(objects(ws.store)) == 2
    assert ws.store.labels() == ["agent1.1", "agent1.2", "agent2.1"]
    assert set(ws.store.load("agent1.2").files) == {"new.txt", "same.txt"}
    assert set(ws.store.load("agent1.1").files) == {"same.txt"}


def test_a_resnapshot_reads_only_what_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "RACY_SECONDS", 0.05)
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(20):
        (root / f"f{i}.txt").write_text(str(i))
    time.sleep(0.1)
    snap = Snapshotter(Store(tmp_path / "store"), root)
    snap.take()
    (root / "f3.txt").write_text("changed")
    second = snap.take()
    assert snap.files_read == 21
    assert len(second.files) == 20


def test_a_file_rewritten_at_once_with_the_same_size_is_read_again(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one")
    snap = Snapshotter(Store(tmp_path / "store"), root)
    first = snap.take()
    (root / "a.txt").write_text("two")  # likely within the same timestamp tick
    assert snap.take().files["a.txt"].hash != first.files["a.txt"].hash


def test_git_massgen_gitignored_symlinks_and_big_files_are_left_out(tmp_path):
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref")
    (root / ".massgen").mkdir()
    (root / ".massgen" / "x").write_text("x")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("o")
    (root / "keep.log").write_text("k")
    (root / "drop.log").write_text("d")
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "big.bin").write_bytes(b"x" * 2000)
    (root / "link").symlink_to("/etc/passwd")
    (root / "dirlink").symlink_to(tmp_path)
    manifest = Snapshotter(Store(tmp_path / "store"), root, Limits(max_file_bytes=1000)).take()
    assert sorted(manifest.files) == [".gitignore", "keep.log"]
    assert sorted(manifest.skipped) == ["big.bin", "dirlink", "link"]


def test_the_file_cap_lists_the_rest_as_skipped(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(5):
        (root / f"f{i}").write_text(str(i))
    manifest = Snapshotter(Store(tmp_path / "s"), root, Limits(max_files=3)).take()
    assert len(manifest.files) == 3 and len(manifest.skipped) == 2


def test_a_restart_keeps_the_workspace_and_earlier_snapshots_stay_as_published(tmp_path):
    ws = Workspaces(tmp_path, "run1", {"alice": "a"})
    (ws.path("alice") / "app.py").write_text("v1")
    ws.published("alice", "agent1.1")
    # The agent is restarted and goes on editing: nothing is wiped, the snapshot stays.
    (ws.path("alice") / "app.py").write_text("v2")
    again = Workspaces(tmp_path, "run1", {"alice": "a"})  # a fresh object on the same run
    assert (again.path("alice") / "app.py").read_text() == "v2"
    entry = again.store.load("agent1.1").files["app.py"]
    assert again.store.read(entry) == b"v1"


def test_the_presenter_starts_from_the_winners_snapshot_and_its_own_dir_is_kept(tmp_path):
    ws = Workspaces(tmp_path, "run1", {"alice": "a"})
    (ws.path("alice") / "app.py").write_text("voted for")
    os.chmod(ws.path("alice") / "app.py", 0o755)
    ws.published("alice", "agent1.1")
    (ws.path("alice") / "later.txt").write_text("not voted for")
    final = ws.presenting("alice", "agent1.1")
    assert sorted(p.name for p in final.iterdir()) == ["app.py"]
    assert os.stat(final / "app.py").st_mode & 0o111
    assert (ws.path("alice") / "later.txt").exists()
    (final / "report.md").write_text("done")
    log = tmp_path / "log"
    ws.save_final(log, "agent1.1")
    assert sorted(p.name for p in (log / "final" / "workspace").iterdir()) == [
        "app.py",
        "report.md",
    ]
    assert "report.md" in ws.store.load("final").files


def test_an_earlier_turns_presentation_is_not_this_runs_final_workspace(tmp_path):
    from massgen.workspace.team import FINAL, Workspaces

    stale = tmp_path / "workspaces" / "run" / FINAL
    stale.mkdir(parents=True)
    (stale / "old.txt").write_text("from the turn before")
    ws = Workspaces(tmp_path, "run", {"a": "wa"})
    (ws.path("a") / "new.txt").write_text("this turn")
    ws.published("a", "agent1.1")
    final = ws.save_final(None, "agent1.1")
    assert final is not None
    assert sorted(p.name for p in final.iterdir()) == ["new.txt"]
