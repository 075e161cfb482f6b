"""Done-when: a team on the fake provider whose models try the whole hostile corpus, with
default settings, finishes; every attempt is refused, nothing outside the workspaces
changes, every decision is in the ledger; with a rule file allowing one command, that
command runs and no other."""

from __future__ import annotations

import json

import pytest
from hostile_corpus import PY_WRITE, Tree, corpus

from massgen.api import TeamRun
from massgen.core import events as ev
from massgen.permissions.ledger import read
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Reply, cooperative_agent

IDS = ("alice", "bob")
ALLOWED = f'python3 -c "{PY_WRITE.format(target="made_by_rule.txt")}"'


def hostile(calls):
    def reply(request: dict) -> Reply:
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        tried = any(m.get("role") == "tool" for m in request["messages"])
        if "new_answer" in offered and not tried:
            return Reply(tool_calls=[(name, args) for name, args, _ in calls])
        if "new_answer" in offered or "vote" in offered:
            return cooperative_agent(request)
        return Reply(text="Final: I could not do what was refused.")

    return reply


def team(base_url: str) -> dict:
    agents = [
        {"id": agent, "backend": {"type": "chatcompletion", "base_url": base_url, "api_key": "k",
                                  "model": f"m{n}", "cwd": f"ws{n}", "enable_mcp_command_line": True}}
        for n, agent in enumerate(IDS)
    ]  # fmt: skip
    return {"agents": agents, "orchestrator": {"seed": 3, "max_new_answers_per_agent": 1}}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    return Tree(tmp_path).enter(monkeypatch)


async def run_team(tree: Tree, calls):
    seen: list[ev.AnyEvent] = []
    with FakeProvider(hostile(calls)) as fake:
        run = TeamRun(load(team(fake.base_url)), "Tidy up my machine.", sinks=[seen.append])
        result = await run.execute()
        requests = fake.requests
    return result, seen, requests


async def test_the_hostile_corpus_is_refused_with_default_settings(tree):
    before = tree.snapshot()
    calls = corpus(tree)
    result, seen, requests = await run_team(tree, calls)

    assert result.ok, result.reason
    assert tree.snapshot() == before
    records = read(result.log_dir / "permissions.jsonl")
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    attempts = [r for r in records if r["tool"] in {name for name, _, _ in calls}]
    assert len(attempts) == len(calls) * len(IDS)
    assert all(r["decision"] == "deny" for r in attempts), [
        r for r in attempts if r["decision"] != "deny"
    ]
    refusals = [m["content"] for r in requests for m in r["messages"] if m.get("role") == "tool"]
    assert sum("refused by the permission engine" in c for c in refusals) >= len(calls)
    assert any(
        "PERMISSIONS:" in m["content"]
        for r in requests
        for m in r["messages"]
        if m["role"] == "system"
    )
    decided = [e for e in seen if isinstance(e, ev.PermissionDecided)]
    assert len(decided) == len(records) and not any(
        e.allowed for e in decided if e.tool in {n for n, _, _ in calls}
    )
    assert "REFUSED" in (result.log_dir / "coordination_table.txt").read_text()
    for text in map(json.dumps, requests):  # refusals name no agent and no workspace
        assert not any(secret in text for secret in (*IDS, "ws0", "ws1")), text


async def test_a_rule_file_allowing_one_command_runs_it_and_no_other(tree):
    settings = tree.project / ".massgen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"allow": [f"Command({ALLOWED})"]}}))
    before = tree.snapshot()
    calls = [*corpus(tree), ("execute_command", {"command": ALLOWED}, "the allowed one")]
    result, _, _ = await run_team(tree, calls)

    assert result.ok, result.reason
    assert tree.snapshot() == before
    records = read(result.log_dir / "permissions.jsonl")
    ran = [r for r in records if r["tool"] == "execute_command" and r["decision"] == "allow"]
    assert len(ran) == len(IDS)
    assert all(json.loads(r["arguments"])["command"] == ALLOWED for r in ran)
    assert all(r["rule"] == f"Command({ALLOWED})" for r in ran)
    made = list((tree.project / ".massgen" / "workspaces").rglob("made_by_rule.txt"))
    assert {p.parent.name for p in made} >= {"ws0", "ws1"}
    assert all(p.read_text() == "pwned" for p in made)
