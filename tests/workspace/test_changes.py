"""What an answer changed in its workspace: files added, changed and removed since the
agent's previous answer (or since the run found the workspace), as a bounded diff."""

from __future__ import annotations

from massgen.workspace import changes
from massgen.workspace.team import Workspaces


def test_a_second_answer_lists_only_what_changed_since_the_first(tmp_path):
    ws = Workspaces(tmp_path, "run1", {"alice": "a"})
    (ws.path("alice") / "keep.txt").write_text("same\n")
    (ws.path("alice") / "edit.py").write_text("x = 1\n")
    (ws.path("alice") / "gone.md").write_text("bye\n")
    first = ws.published("alice", "agent1.1")
    assert first is not None
    assert first.files == ("+ edit.py", "+ gone.md", "+ keep.txt")

    (ws.path("alice") / "edit.py").write_text("x = 2\n")
    (ws.path("alice") / "gone.md").unlink()
    (ws.path("alice") / "new.txt").write_text("hello\n")
    second = ws.published("alice", "agent1.2")
    assert second is not None
    assert second.files == ("+ new.txt", "~ edit.py", "- gone.md")
    assert "-x = 1\n+x = 2\n" in second.diff
    assert "--- a/gone.md\n+++ /dev/null\n" in second.diff
    assert "keep.txt" not in second.diff


def test_an_earlier_turns_files_are_not_counted_as_this_answers(tmp_path):
    (tmp_path / "workspaces" / "run1" / "a").mkdir(parents=True)
    (tmp_path / "workspaces" / "run1" / "a" / "old.txt").write_text("from turn 1\n")
    ws = Workspaces(tmp_path, "run1", {"alice": "a"})
    (ws.path("alice") / "new.txt").write_text("turn 2\n")
    said = ws.published("alice", "agent1.1")
    assert said is not None and said.files == ("+ new.txt",)


def test_binary_and_large_files_are_listed_not_diffed(tmp_path, monkeypatch):
    monkeypatch.setattr(changes, "MAX_FILE_BYTES", 100)
    ws = Workspaces(tmp_path, "run1", {"alice": "a"})
    (ws.path("alice") / "image.png").write_bytes(b"\x89PNG\0\0data")
    (ws.path("alice") / "big.txt").write_text("y" * 500)
    said = ws.published("alice", "agent1.1")
    assert said is not None
    assert "Binary or large file image.png added" in said.diff
    assert "Binary or large file big.txt added" in said.diff
    assert "yyyy" not in said.diff


def test_the_diff_and_the_file_list_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(changes, "MAX_FILES", 5)
    ws = Workspaces(tmp_path, "run1", {"alice": "a"})
    for i in range(40):
        (ws.path("alice") / f"f{i:02}.txt").write_text(f"line {i}\n" * 50)
    said = ws.published("alice", "agent1.1")
    assert said is not None
    assert len(said.files) == 6 and said.files[-1] == "… and 35 more"
    assert len(said.diff) <= changes.MAX_DIFF_CHARS + 100
    assert said.diff.endswith(f"the diff is cut at {changes.MAX_DIFF_CHARS} characters\n")


def test_an_agent_without_a_workspace_changes_nothing(tmp_path):
    ws = Workspaces(tmp_path, "run1", {"alice": "a"})
    assert ws.published("bob", "agent2.1") is None
