"""Filesystem memory (`workspace/memory.py`): on the fake provider, a memory one agent
writes with `write_file` is in its peers' next requests, under the answer's label, and
in its own; the prompt section keeps its bounds; nothing outside a workspace is read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from massgen.api import TeamRun
from massgen.core.errors import ConfigError
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.testing.teams import workspace_agents
from massgen.workspace import memory
from massgen.workspace.team import Workspaces

IDS = ("alice", "bob")
NOTE = "---\nname: findings\ndescription: what the first agent found\n---\nThe answer is 42.\n"


def _system(request: dict) -> str:
    return request["messages"][0]["content"]


def rememberer(request: dict) -> Reply:
    """Agent m-0 writes a short-term memory before its answer; everyone then cooperates."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m for m in request["messages"] if m["role"] == "tool"]
    if request["model"] == "m-0" and "new_answer" in offered and not results:
        path = "memory/short_term/findings.md"
        return Reply(tool_calls=[("write_file", {"path": path, "content": NOTE})])
    return cooperative_agent(request) if offered else Reply(text="Final: 42.")


def _config(base_url: str, **coordination: object) -> dict:
    return {
        "agents": workspace_agents(base_url, IDS, model="m-{n}"),
        "orchestrator": {
            "seed": 3,
            "max_new_answers_per_agent": 1,
            "coordination": {"enable_memory_filesystem_mode": True, **coordination},
        },
    }


async def test_a_memory_one_agent_writes_is_in_its_peers_next_request(in_tmp):
    with FakeProvider(rememberer) as fake:
        run = TeamRun(load(_config(fake.base_url)), "What is six times seven?")
        result = await run.execute()
        requests = fake.requests
    assert result.ok, result.reason
    label = f"{run.outcome.labels['alice']}.1"
    peers_view = f"## peers/{label}/memory/short_term/findings.md: what the first agent found"
    bob = [_system(r) for r in requests if r["model"] == "m-1"]
    assert "MEMORY:" in bob[0] and "(none yet)" in bob[0]  # before alice published
    assert any(peers_view in s and "The answer is 42." in s for s in bob[1:])
    alice = [_system(r) for r in requests if r["model"] == "m-0"]
    own_view = "## memory/short_term/findings.md: what the first agent found\nThe answer is 42."
    assert any(own_view in s for s in alice)
    for text in map(json.dumps, requests):
        for secret in (*IDS, str(in_tmp), "ws0", "ws1", ".massgen"):
            assert secret not in text
    presenting = [
        _system(r)
        for r in requests
        if {t["function"]["name"] for t in r.get("tools") or []}.isdisjoint({"vote", "new_answer"})
    ]
    assert presenting and all(memory.PRESENTER_NOTE in s for s in presenting)
    # The final workspace is the winner's: its memories are what carries to a next turn.
    final = result.log_dir / "final" / "workspace" / "memory" / "short_term" / "findings.md"
    assert final.exists() == (result.winner == "alice")


async def test_without_the_key_no_memory_section_is_shown(in_tmp):
    with FakeProvider(rememberer) as fake:
        config = _config(fake.base_url)
        del config["orchestrator"]["coordination"]
        result = await TeamRun(load(config), "q").execute()
        assert result.ok
        assert not any("MEMORY:" in _system(r) for r in fake.requests)


def test_memory_mode_without_any_workspace_is_a_config_error(in_tmp):
    agents = [{"id": "a", "backend": {"type": "chatcompletion", "model": "m", "api_key": "k"}}]
    config = {
        "agents": agents,
        "orchestrator": {"coordination": {"enable_memory_filesystem_mode": True}},
    }
    with pytest.raises(ConfigError) as caught:
        load(config)
    assert "enable_memory_filesystem_mode" in str(caught.value)
    assert "backend.cwd" in str(caught.value)


# --- the prompt section, over real workspaces -------------------------------------------


def _workspaces(base: Path) -> Workspaces:
    return Workspaces(base, "run", {"a": "wa", "b": "wb"})


def _write(root: Path, tier: str, name: str, text: str, when: float) -> Path:
    path = root / "memory" / tier / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (when, when))
    return path


def _titles(note: str | None) -> list[str]:
    assert note is not None
    return [line[3:] for line in note.splitlines() if line.startswith("## ")]


def test_short_term_memories_come_newest_first_within_count_and_chars(tmp_path):
    ws = _workspaces(tmp_path)
    for n in range(6):
        _write(ws.path("a"), "short_term", f"m{n}.md", f"note {n} " + "x" * 300, when=1000 + n)
    by_count = memory.TeamMemory(ws, memory.MemoryBounds(max_short_term=2)).note("a", [])
    assert _titles(by_count) == ["memory/short_term/m5.md", "memory/short_term/m4.md"]
    assert "[4 more short-term memories not shown;" in str(by_count)
    assert memory.CUT_MARKER not in str(by_count)

    by_chars = memory.TeamMemory(ws, memory.MemoryBounds(max_chars=900)).note("a", [])
    assert _titles(by_chars) == [f"memory/short_term/m{n}.md" for n in (5, 4, 3)]
    assert str(by_chars).count(memory.CUT_MARKER) == 1  # the third, where the chars end
    assert "[3 more short-term memories not shown;" in str(by_chars)
    body = str(by_chars).split("<SHORT-TERM MEMORIES>\n")[1].split("\n<END OF SHORT-TERM")[0]
    assert "note 3 " + "x" * 279 + "\n" + memory.CUT_MARKER in body  # 900 - 2 * 307 chars
    assert "note 2" not in body


def test_a_huge_memory_is_read_only_as_far_as_the_prompt_shows(tmp_path):
    ws = _workspaces(tmp_path)
    _write(ws.path("a"), "short_term", "big.md", "y" * 5_000_000, when=1)
    note = memory.TeamMemory(ws, memory.MemoryBounds(max_chars=1000)).note("a", [])
    assert note is not None and memory.CUT_MARKER in note
    assert len(note) < 5000


def test_long_term_memories_are_listed_by_description_and_bounded(tmp_path):
    ws = _workspaces(tmp_path)
    for n in range(4):
        text = f"---\nname: l{n}\ndescription: about {n}\n---\nlong body {n}\n"
        _write(ws.path("a"), "long_term", f"l{n}.md", text, when=10 + n)
    note = memory.TeamMemory(ws, memory.MemoryBounds(max_long_term=2)).note("a", [])
    assert note is not None
    assert "- memory/long_term/l3.md: about 3\n- memory/long_term/l2.md: about 2" in note
    assert "[2 more not listed;" in note
    assert "long body" not in note  # read on demand, with read_file


def test_a_peers_memories_come_from_its_published_snapshot_under_its_label(tmp_path):
    ws = _workspaces(tmp_path)
    _write(ws.path("b"), "short_term", "p.md", "published note", when=5)
    ws.published("b", "agent2.1")
    _write(ws.path("b"), "short_term", "p.md", "written after publishing", when=6)
    note = memory.TeamMemory(ws).note("a", ["agent2.1"])
    assert note is not None
    assert "## peers/agent2.1/memory/short_term/p.md\npublished note" in note
    assert "written after publishing" not in note
    assert "wb" not in note and str(tmp_path) not in note
    assert memory.TeamMemory(ws).note("nobody", []) is None  # no workspace, no section


def test_the_same_memory_in_several_workspaces_is_shown_once_as_ones_own(tmp_path):
    ws = _workspaces(tmp_path)
    for agent in ("a", "b"):
        _write(ws.path(agent), "short_term", "carried.md", "carried from last turn", when=5)
    ws.published("b", "agent2.1")
    note = memory.TeamMemory(ws).note("a", ["agent2.1"])
    assert note is not None and note.count("carried from last turn") == 1
    assert "## memory/short_term/carried.md" in note


def test_symlinks_out_of_the_workspace_are_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    ws = _workspaces(tmp_path)
    short = ws.path("a") / "memory" / "short_term"
    short.mkdir(parents=True)
    (short / "leak.md").symlink_to(secret)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "long_term").mkdir(parents=True)
    (elsewhere / "long_term" / "x.md").write_text("---\ndescription: TOP SECRET\n---\n")
    (ws.path("b") / "memory").symlink_to(elsewhere)
    for agent in ("a", "b"):
        note = memory.TeamMemory(ws).note(agent, [])
        assert note is not None and "TOP SECRET" not in note


def test_carry_replaces_each_workspaces_memories_with_a_bounded_copy(tmp_path):
    previous = tmp_path / "previous"
    _write(previous, "short_term", "keep.md", "kept", when=50)
    _write(previous, "short_term", "huge.md", "z" * (memory.MAX_CARRIED_BYTES + 1), when=60)
    _write(previous, "long_term", "deep.md", "deep", when=40)
    (previous / "memory" / "short_term" / "link.md").symlink_to(tmp_path / "nowhere")
    for n in range(memory.MAX_CARRIED_FILES + 5):
        _write(previous, "long_term", f"n{n:03}.md", "n", when=n)
    target = tmp_path / "ws"
    _write(target, "short_term", "stale.md", "the agent's own, from before", when=1)
    memory.carry(previous, [target])
    assert sorted(p.name for p in (target / "memory" / "short_term").iterdir()) == ["keep.md"]
    long = sorted(p.name for p in (target / "memory" / "long_term").iterdir())
    assert len(long) == memory.MAX_CARRIED_FILES and "deep.md" in long
    assert "n000.md" not in long  # the oldest go first
    assert (target / "memory" / "short_term" / "keep.md").stat().st_mtime == 50


# --- the predecessor's keys -----------------------------------------------------------------


def test_the_predecessors_key_loads_as_the_typed_field(in_tmp):
    config = _config("http://127.0.0.1:9/v1", memory_max_chars=2000)
    coordination = load(config).config.orchestrator.coordination
    assert coordination.enable_memory_filesystem_mode is True
    assert coordination.memory_max_chars == 2000


def test_a_per_agent_mem0_memory_block_is_refused_naming_what_to_use_instead(in_tmp):
    """The top-level block is read as filesystem memory (tests/config/
    test_predecessor_blocks.py); one agent's own mem0 block has no per-agent equivalent."""
    config = _config("http://127.0.0.1:9/v1")
    config["agents"][0]["memory"] = {"enabled": True, "persistent_memory": {"enabled": True}}
    with pytest.raises(ConfigError) as caught:
        load(config)
    message = str(caught.value)
    assert "`agents[0].memory`" in message
    assert "mem0" in message and "Qdrant" in message
    assert "enable_memory_filesystem_mode: true" in message


def test_the_memory_example_runs_on_the_fake_provider(in_tmp, monkeypatch, capsys):
    from massgen.cli import main

    def everyone_remembers(request: dict) -> Reply:
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        if "new_answer" in offered and not any(m["role"] == "tool" for m in request["messages"]):
            path = "memory/short_term/user.md"
            return Reply(tool_calls=[("write_file", {"path": path, "content": NOTE})])
        return cooperative_agent(request) if offered else Reply(text="A monad is a monoid.")

    with FakeProvider(everyone_remembers) as fake:
        monkeypatch.setenv("MASSGEN_BASE_URL", fake.base_url)
        code = main(["--config", "@examples/tools/memory", "What is a monad?"])
    assert code == 0, capsys.readouterr().err
    (log,) = (in_tmp / ".massgen" / "massgen_logs").glob("log_*/turn_1")
    assert (log / "final" / "workspace" / "memory" / "short_term" / "user.md").read_text() == NOTE
