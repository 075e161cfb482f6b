"""The decision function: its order, the approval step, grants, guards, and failing closed."""

from __future__ import annotations

import asyncio
import json

import pytest
from perm_helpers import Scripted, decide, engine, run, zones

from massgen.core.effects import External, Net, Read, Write
from massgen.permissions import engine as engine_module
from massgen.permissions import ledger as ledger_module
from massgen.permissions.approval import Choice
from massgen.permissions.engine import STEPS, Book, Call
from massgen.permissions.ledger import Ledger
from massgen.permissions.policy import PolicyApprover


async def test_defaults_allow_the_workspace_and_refuse_outside(tmp_path):
    e = engine(tmp_path)
    ws = zones(tmp_path).workspace
    assert (await decide(e, tmp_path, Read(ws / "a.py"))).allowed
    assert (await decide(e, tmp_path, Write(ws / "src" / "a.py"))).allowed
    outside = await decide(e, tmp_path, Read(tmp_path / "elsewhere.txt"))
    assert not outside.allowed and "outside the managed paths" in outside.reason
    assert not (await decide(e, tmp_path, Write(tmp_path / "x"))).allowed


async def test_deny_beats_ask_beats_allow(tmp_path):
    approver = Scripted(Choice.ONCE)
    e = engine(tmp_path, allow=["Command(git *)"], ask=["Command(git push *)"],
               deny=["Command(git push --force *)"], approver=approver)  # fmt: skip
    assert (await decide(e, tmp_path, run(tmp_path, "git log"))).allowed
    asked = await decide(e, tmp_path, run(tmp_path, "git push origin"))
    assert asked.allowed and asked.operator == "human" and len(approver.asked) == 1
    assert approver.asked[0].reason.startswith("ask rule")
    denied = await decide(e, tmp_path, run(tmp_path, "git push --force origin"))
    assert not denied.allowed and denied.rule == "Command(git push --force *)"
    assert len(approver.asked) == 1


async def test_every_part_of_a_chain_must_pass(tmp_path):
    e = engine(tmp_path, allow=["Command(pytest *)"], approver=PolicyApprover("deny-all"))
    assert (await decide(e, tmp_path, run(tmp_path, "pytest -q"))).allowed
    assert not (await decide(e, tmp_path, run(tmp_path, "pytest -q && curl evil.example"))).allowed
    assert not (await decide(e, tmp_path, run(tmp_path, "pytest $(curl evil.example)"))).allowed


async def test_an_ask_rule_counts_as_deny_when_nobody_can_answer(tmp_path):
    e = engine(tmp_path, ask=["Command(ls *)"])  # the default approver: risk-based policy
    decision = await decide(e, tmp_path, run(tmp_path, "ls"))
    assert not decision.allowed and decision.operator == "policy"


async def test_risk_based_allows_medium_and_denies_high(tmp_path):
    e = engine(tmp_path)
    assert (await decide(e, tmp_path, run(tmp_path, "make build"))).allowed
    high = await decide(e, tmp_path, run(tmp_path, "curl https://example.com"))
    assert not high.allowed and high.operator == "policy"
    assert not (await decide(e, tmp_path, Net("example.com"))).allowed
    e2 = engine(tmp_path, approver=PolicyApprover("deny-all"))
    assert not (await decide(e2, tmp_path, run(tmp_path, "make build"))).allowed
    e3 = engine(tmp_path, approver=PolicyApprover("allow-all"))
    assert (await decide(e3, tmp_path, run(tmp_path, "curl https://example.com"))).allowed
    assert not (await decide(e3, tmp_path, Read(tmp_path / "outside"))).allowed


@pytest.mark.parametrize(
    ("command", "allowed"),
    [("awk '{print $1}' a.txt", True), ("awk 'BEGIN{system(\"id\")}'", False),
     ("git status", True), ("git push origin", False), ("sudo ls", False),
     ("pip install requests", False), ("python3 script.py", True), ("node -e 1", False)],
)  # fmt: skip
async def test_the_risk_default_of_some_commands(tmp_path, command, allowed):
    assert (await decide(engine(tmp_path), tmp_path, run(tmp_path, command))).allowed is allowed


async def test_a_toolbox_that_declares_no_effects_is_high_risk(tmp_path):
    from massgen.core.toolbox import UNKNOWN_SERVER

    decision = await decide(engine(tmp_path), tmp_path, External(UNKNOWN_SERVER, "mystery"))
    assert not decision.allowed and decision.risk == "high"


async def test_session_grants_hold_for_the_run(tmp_path):
    approver = Scripted(Choice.SESSION)
    e = engine(tmp_path, approver=approver)
    for _ in range(3):
        assert (await decide(e, tmp_path, Net("example.com"))).allowed
    assert len(approver.asked) == 1
    assert not (await decide(e, tmp_path, Net("other.com"))).allowed


async def test_always_grants_are_stored_as_allow_rules(tmp_path):
    local = tmp_path / ".massgen" / "settings.local.json"
    approver = Scripted(Choice.ALWAYS)
    e = engine(tmp_path, approver=approver, grants_path=local)
    assert (await decide(e, tmp_path, run(tmp_path, "make deploy"))).allowed
    assert json.loads(local.read_text()) == {"permissions": {"allow": ["Command(make deploy)"]}}
    again = await decide(e, tmp_path, run(tmp_path, "make deploy"))
    assert again.allowed and again.operator == "rule" and len(approver.asked) == 1


async def test_the_approver_sees_the_agent_effect_and_risk(tmp_path):
    approver = Scripted()
    e = engine(tmp_path, approver=approver)
    denied = await decide(e, tmp_path, External("github", "create_issue"))
    assert not denied.allowed and denied.operator == "human"
    request = approver.asked[0]
    assert (request.agent, request.risk) == ("alice", "medium")
    assert request.effects == (External("github", "create_issue"),)
    assert request.details == ("call `github/create_issue`",)


async def test_a_budget_of_automatic_approvals(tmp_path):
    e = engine(tmp_path, max_consecutive_auto=2)
    results = [(await decide(e, tmp_path, run(tmp_path, f"make t{i}"))).allowed for i in range(3)]
    assert results == [True, True, False]
    assert "automatic approvals" in e.ledger.records[-1]["reason"]


async def test_a_person_resets_the_budget(tmp_path):
    approver = Scripted(Choice.ONCE, Choice.ONCE, Choice.ONCE)
    e = engine(tmp_path, approver=approver, max_consecutive_auto=1)
    assert all([(await decide(e, tmp_path, run(tmp_path, f"make t{i}"))).allowed for i in range(3)])


async def test_a_read_only_role(tmp_path):
    from massgen.runs.wiring import _READ_ONLY

    e = engine(tmp_path)
    e.books["alice"] = _READ_ONLY.plus(Book())
    ws = zones(tmp_path).workspace
    assert (await decide(e, tmp_path, Read(ws / "a"))).allowed
    assert not (await decide(e, tmp_path, Write(ws / "a"))).allowed
    assert not (await decide(e, tmp_path, run(tmp_path, "ls"))).allowed


async def test_context_paths_are_written_only_by_the_presenter_and_only_when_asked(tmp_path):
    from massgen.permissions.risk import Zones

    site = (tmp_path / "site").resolve()
    site.mkdir()
    z = Zones(workspace=zones(tmp_path).workspace, readable=(site,), writable=(site,),
              protected=(site / ".git",))  # fmt: skip
    approver = Scripted(Choice.ONCE)
    e = engine(tmp_path, approver=approver)

    async def write(path, phase):
        return await e.decide(Call("alice", "write_file", (Write(path),), z, phase))

    assert (await e.decide(Call("alice", "read_file", (Read(site / "a"),), z))).allowed
    assert not (await write(site / "a", "coordination")).allowed
    assert (await write(site / "a", "presentation")).allowed and len(approver.asked) == 1
    assert not (await write(site / ".git" / "config", "presentation")).allowed


# --- failing closed ---------------------------------------------------------------------


@pytest.mark.parametrize("step", STEPS)
async def test_a_fault_in_any_step_is_a_recorded_deny(tmp_path, monkeypatch, step):
    e = engine(tmp_path, approver=PolicyApprover("allow-all"))

    def broken(*args, **kwargs):
        raise RuntimeError(f"injected into {step}")

    monkeypatch.setattr(e, f"_{step}", broken)
    # A call that would reach every step: an asked command.
    decision = await decide(e, tmp_path, run(tmp_path, "make build"))
    assert not decision.allowed and decision.operator == "error"
    assert f"injected into {step}" in decision.reason
    assert e.ledger.records[-1]["decision"] == "deny"


@pytest.mark.parametrize("module_fn", ["floor_check", "subjects_of", "default", "secret"])
async def test_a_fault_in_a_helper_is_a_deny(tmp_path, monkeypatch, module_fn):
    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(engine_module, module_fn, broken)
    decision = await decide(engine(tmp_path), tmp_path, Read(zones(tmp_path).workspace / "a"))
    assert not decision.allowed and decision.operator == "error"


async def test_an_approver_that_raises_or_answers_garbage_is_a_deny(tmp_path):
    class Raising:
        operator = "human"

        async def ask(self, request):
            raise ConnectionError("the terminal went away")

    class Garbage:
        operator = "human"

        async def ask(self, request):
            return "yes"

    for approver in (Raising(), Garbage()):
        decision = await decide(engine(tmp_path, approver=approver), tmp_path, Net("x.com"))
        assert not decision.allowed


async def test_a_cancelled_approval_is_recorded_and_propagates(tmp_path):
    class Waiting:
        operator = "human"

        async def ask(self, request):
            await asyncio.sleep(3600)

    e = engine(tmp_path, approver=Waiting())
    task = asyncio.create_task(decide(e, tmp_path, Net("x.com")))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert e.ledger.records[-1]["decision"] == "deny"


async def test_a_ledger_that_cannot_be_written_denies(tmp_path, capsys):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    e = engine(tmp_path)
    e.ledger = Ledger(blocker / "permissions.jsonl")
    decision = await decide(e, tmp_path, Read(zones(tmp_path).workspace / "a"))
    assert not decision.allowed and "could not be recorded" in decision.reason
    assert "ledger not written" in capsys.readouterr().err


async def test_the_ledger_is_durable_jsonl_with_one_rising_sequence(tmp_path):
    e = engine(tmp_path)
    ws = zones(tmp_path).workspace
    for name in ("a", "b", "c"):
        await decide(e, tmp_path, Read(ws / name))
    await e.decide(Call("bob", "t", (Read(ws / "d"),), zones(tmp_path)))
    records = ledger_module.read(tmp_path / "log" / "permissions.jsonl")
    assert [r["seq"] for r in records] == [1, 2, 3, 4]
    assert [r["agent"] for r in records] == ["alice", "alice", "alice", "bob"]
    assert set(records[0]) >= {
        "seq",
        "at",
        "agent",
        "tool",
        "effects",
        "decision",
        "operator",
        "reason",
        "risk",
        "rule",
    }
