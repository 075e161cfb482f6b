"""A 3-agent run on the fake provider in which agents write files and read each other's:
the winner's files end in `final/workspace/` of the log dir, every published snapshot is
in the store, and no request a model receives names a real agent id."""

from __future__ import annotations

import json

from massgen.api import TeamRun
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.testing.teams import workspace_agents

IDS = ("alice", "bob", "carol")
PROGRAM = "print('hello from {model}')\n"


def builder(request: dict) -> Reply:
    """Write a program before answering; as a voter, look at a peer's files first; as the
    presenter, add a note to the chosen files."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    model = request["model"]
    if "new_answer" in offered:
        if not any(r.startswith("Wrote") for r in results):
            content = PROGRAM.format(model=model)
            return Reply(tool_calls=[("write_file", {"path": "src/main.py", "content": content})])
        return cooperative_agent(request)
    if "vote" in offered:
        if not results:
            return Reply(tool_calls=[("list_dir", {"path": "peers"})])
        if len(results) == 1:
            label = results[0].splitlines()[0].rstrip("/")
            return Reply(tool_calls=[("read_file", {"path": f"peers/{label}/src/main.py"})])
        return cooperative_agent(request)
    if "write_file" in offered and not results:
        return Reply(tool_calls=[("write_file", {"path": "NOTES.md", "content": "presented"})])
    return Reply(text="Final: the program is in src/main.py.")


async def test_the_winners_files_end_in_the_log_dir_and_peers_never_see_real_ids(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with FakeProvider(builder) as fake:
        agents = workspace_agents(fake.base_url, IDS, model="model-{n}")
        config = {"agents": agents, "orchestrator": {"seed": 5, "max_new_answers_per_agent": 1}}
        run = TeamRun(load(config), "Write a hello-world program.")
        result = await run.execute()
        requests = fake.requests

    assert result.ok, result.reason
    winner_model = f"model-{IDS.index(result.winner)}"
    final = result.log_dir / "final" / "workspace"
    assert (final / "src" / "main.py").read_text() == PROGRAM.format(model=winner_model)
    assert (final / "NOTES.md").read_text() == "presented"
    assert (result.log_dir / "final" / "answer.txt").exists()

    store = next((tmp_path / ".massgen" / "snapshots").iterdir())
    labels = sorted(p.stem for p in (store / "manifests").glob("*.json"))
    assert labels == sorted([f"{run.outcome.labels[a]}.1" for a in IDS] + ["final"])
    for agent in IDS:
        n = IDS.index(agent)
        manifest = json.loads(
            (store / "manifests" / f"{run.outcome.labels[agent]}.1.json").read_text()
        )
        assert list(manifest["files"]) == ["src/main.py"]
        digest = manifest["files"]["src/main.py"][0]
        stored = (store / "objects" / digest[:2] / digest).read_text()
        assert stored == PROGRAM.format(model=f"model-{n}")
        # The agent's own workspace is kept as it left it.
        workspace = tmp_path / ".massgen" / "workspaces" / store.name / f"ws{n}"
        assert (workspace / "src" / "main.py").read_text() == stored

    texts = [json.dumps(r) for r in requests]
    assert any("peers/agent" in t for t in texts)  # the voters did read peers' files
    assert any("hello from" in t and '"role": "tool"' in t for t in texts)
    for text in texts:
        for secret in (*IDS, str(tmp_path), "ws0", "ws1", "ws2", ".massgen"):
            assert secret not in text


async def test_agents_without_a_workspace_run_exactly_as_before(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with FakeProvider(cooperative_agent) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "api_key": "k"}
        config = {"agents": [{"id": a, "backend": {**backend, "model": a}} for a in IDS]}
        result = await TeamRun(load(config), "q").execute()
        offered = {t["function"]["name"] for r in fake.requests for t in r.get("tools") or []}
    assert result.ok
    assert offered == {"new_answer", "vote"}
    assert not (tmp_path / ".massgen" / "workspaces").exists()
    assert not (result.log_dir / "final" / "workspace").exists()


def test_the_workspace_preset_runs_on_the_fake_provider(tmp_path, monkeypatch, capsys):
    from massgen.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MASSGEN_LOG_BASE_DIR", raising=False)
    with FakeProvider(builder) as fake:
        monkeypatch.setenv("MASSGEN_BASE_URL", fake.base_url)
        code = main(["--config", "@examples/tools/workspace", "Write a word counter."])
    assert code == 0, capsys.readouterr().err
    (log,) = (tmp_path / ".massgen" / "massgen_logs").glob("log_*/turn_1")
    program = (log / "final" / "workspace" / "src" / "main.py").read_text()
    assert program.startswith("print('hello from ")


async def test_each_answer_says_what_it_changed_in_its_workspace(tmp_path, monkeypatch):
    """The journal, the log folder and the table carry each answer's files and diff."""
    monkeypatch.chdir(tmp_path)
    with FakeProvider(builder) as fake:
        agents = workspace_agents(fake.base_url, IDS, model="model-{n}")
        config = {"agents": agents, "orchestrator": {"seed": 5, "max_new_answers_per_agent": 1}}
        result = await TeamRun(load(config), "Write a hello-world program.").execute()

    assert result.ok, result.reason
    lines = (result.log_dir / "events.jsonl").read_text().splitlines()
    published = [e for e in map(json.loads, lines) if e["type"] == "answer_published"]
    assert len(published) == 3
    for event in published:
        n = IDS.index(event["agent"])
        assert event["files"] == ["+ src/main.py"]
        assert "+++ b/src/main.py" in event["diff"]
        assert f"+print('hello from model-{n}')" in event["diff"]
        saved = result.log_dir / f"agent_{event['agent']}" / "answer_1.diff"
        assert saved.read_text() == event["diff"]
    table = (result.log_dir / "coordination_table.txt").read_text()
    assert table.count("· files: 1 added") == 3
