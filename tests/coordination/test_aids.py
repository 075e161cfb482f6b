"""Personas, evaluation criteria and the changedoc (`coordination/aids/`) in team runs on
the fake provider: what each agent's system prompt holds, run by run, what the views and
the log show, and that a failed generation leaves a run that still ends well."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import yaml
from resumed_runs import interrupted, resume
from shown import shown
from teams import member

from massgen.api import TeamRun
from massgen.config import load_config
from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.record.journal import read_journal
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Fault, Reply, cooperative_agent
from massgen.ui.model import ViewModel

IDS = ("alice", "bob", "carol")
STEMS = ("agent1", "agent2", "agent3")
PERSONA = "You care most about {stem}-ish robustness above all; solve the whole task."
CRITERION = "Criterion {n}: the answer names concrete numbers, not vague claims."


def personas_reply(stems=STEMS) -> Reply:
    entries = {s: {"persona_text": PERSONA.format(stem=s), "summary": f"{s} lens"} for s in stems}
    return Reply(text="Here you go:\n```json\n" + json.dumps({"personas": entries}) + "\n```")


def criteria_reply(count: int = 4) -> Reply:
    items = [
        {
            "text": CRITERION.format(n=n),
            "category": "primary" if n == 1 else "standard",
            "anti_patterns": [f"vague claim {n}"],
        }
        for n in range(1, count + 1)
    ]
    return Reply(text=json.dumps({"aspiration": "a reviewer would cite it", "criteria": items}))


def first_user(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def system_of(request: dict) -> str:
    return next((m["content"] for m in request["messages"] if m["role"] == "system"), "")


def generating(personas: Reply | None = None, criteria: Reply | None = None):
    """Answers the generation calls as told (a fault when None), then cooperates."""

    def policy(request: dict) -> Reply:
        text = first_user(request)
        if text.startswith("You are assigning different"):
            return personas or Reply(fault=Fault.server_error())
        if text.startswith("You are writing the evaluation criteria"):
            return criteria or Reply(fault=Fault.server_error())
        return cooperative_agent(request)

    return policy


def team(base_url: str, coordination: dict, *, cwd: bool = False) -> dict:
    agents = [
        member(agent, base_url, f"m{n}", **({"cwd": f"ws{n}"} if cwd else {}))
        for n, agent in enumerate(IDS)
    ]
    orchestrator = {"seed": 3, "max_new_answers_per_agent": 1, "coordination": coordination}
    return {"agents": agents, "orchestrator": orchestrator}


async def run_team(fake: FakeProvider, coordination: dict, **kw) -> tuple[TeamRun, list]:
    events: list = []
    run = TeamRun(
        load(team(fake.base_url, coordination, **kw)), "How fast is light?", sinks=[events.append]
    )
    await run.execute()
    return run, events


def coordination_requests(requests: list[dict]) -> list[dict]:
    """The agents' calls (the generation and presentation calls offer no tools)."""
    return [r for r in requests if r.get("tools")]


async def test_each_agent_gets_its_own_persona_until_it_has_answered(in_tmp):
    with FakeProvider(generating(personas=personas_reply())) as fake:
        run, events = await run_team(fake, {"persona_generator": {"enabled": True}})
        requests = list(fake.requests)
    assert run.outcome is not None and run.outcome.status.complete, run.outcome
    labels = run.outcome.labels
    (generation,) = [r for r in requests if not r.get("tools") and "assigning" in first_user(r)]
    assert generation["model"] == "m0"  # the first agent's model writes them
    for agent in IDS:
        assert agent not in json.dumps(generation)  # stems only, never ids
    assigned = {e.agent: e for e in events if isinstance(e, ev.PersonaAssigned)}
    assert set(assigned) == set(IDS)
    saved = yaml.safe_load((run.log_dir / "generated_personas.yaml").read_text())
    for agent in IDS:
        assert assigned[agent].persona == PERSONA.format(stem=labels[agent])
        assert assigned[agent].summary == f"{labels[agent]} lens"
        assert saved[agent] == {
            "persona": assigned[agent].persona,
            "summary": f"{labels[agent]} lens",
        }
    # First runs (no answers in view): the agent's own persona, and no one else's.
    for n, agent in enumerate(IDS):
        own = [r for r in coordination_requests(requests) if r["model"] == f"m{n}"]
        first, *later = own
        assert PERSONA.format(stem=labels[agent]) in system_of(first)
        others = [PERSONA.format(stem=labels[a]) for a in IDS if a != agent]
        assert not any(o in system_of(first) for o in others)
        # drop: after its first answer (its later runs vote), no persona at all.
        assert later
        for request in later:
            assert "YOUR PERSPECTIVE" not in system_of(request)
            assert "robustness above all" not in system_of(request)


async def test_soften_keeps_the_persona_as_a_preference(in_tmp):
    coordination = {"persona_generator": {"enabled": True, "after_first_answer": "soften"}}
    with FakeProvider(generating(personas=personas_reply())) as fake:
        run, _ = await run_team(fake, coordination)
        requests = coordination_requests(fake.requests)
    assert run.outcome is not None and run.outcome.status.complete
    voting = [r for r in requests if any(t["function"]["name"] == "vote" for t in r["tools"])]
    assert {r["model"] for r in voting} == {"m0", "m1", "m2"}
    for request in voting:
        n = int(request["model"][1:])
        stem = run.outcome.labels[IDS[n]]
        system = system_of(request)
        assert "treat your perspective as a preference" in system
        assert PERSONA.format(stem=stem) in system


async def test_criteria_are_in_every_agents_prompt_and_in_the_views(in_tmp):
    coordination = {"evaluation_criteria_generator": {"enabled": True}}
    with FakeProvider(generating(criteria=criteria_reply())) as fake:
        run, events = await run_team(fake, coordination)
        requests = coordination_requests(fake.requests)
    assert run.outcome is not None and run.outcome.status.complete
    (generated,) = [e for e in events if isinstance(e, ev.CriteriaGenerated)]
    assert generated.agent == "alice" and len(generated.criteria) == 4
    assert generated.criteria[0].startswith("E1 (primary): Criterion 1")
    assert generated.aspiration == "a reviewer would cite it"
    assert {r["model"] for r in requests} == {"m0", "m1", "m2"}
    for request in requests:
        system = system_of(request)
        assert "EVALUATION CRITERIA" in system
        assert "E4 (standard): Criterion 4" in system and "vague claim 4" in system
    # The generation's tokens are counted, as the preparation of the first agent.
    phases = {(r.agent, r.phase) for r in run.result(run.outcome).rounds}
    assert ("alice", "preparation") in phases
    # Shown in the live view's pane and the plain view; recorded in the journal.
    printed, panes = shown(events)
    pane_text = panes["alice"]
    assert "📋 evaluation criteria for the team (4)" in pane_text and "E1 (primary)" in pane_text
    assert "[alice] evaluation criteria for the team:" in printed
    journal = read_journal(run.log_dir / "events.jsonl")
    assert [e for e in journal if isinstance(e, ev.CriteriaGenerated)] == [generated]
    saved = yaml.safe_load((run.log_dir / "generated_evaluation_criteria.yaml").read_text())
    assert saved == {"aspiration": generated.aspiration, "criteria": list(generated.criteria)}


async def test_a_failed_generation_is_a_warning_and_the_run_goes_on(in_tmp):
    coordination = {
        "persona_generator": {"enabled": True},
        "evaluation_criteria_generator": {"enabled": True},
    }
    # Personas: the provider fails (500, retried, then given up); criteria: not JSON.
    with FakeProvider(generating(criteria=Reply(text="I would rather not."))) as fake:
        run, events = await run_team(fake, coordination)
        requests = coordination_requests(fake.requests)
    assert run.outcome is not None and run.outcome.status.complete, run.outcome.reason
    assert run.outcome.answer
    failed = {e.what: e for e in events if isinstance(e, ev.GeneratorFailed)}
    assert set(failed) == {"personas", "criteria"}
    assert "no JSON object" in failed["criteria"].error
    assert not any(isinstance(e, ev.PersonaAssigned | ev.CriteriaGenerated) for e in events)
    for request in requests:
        assert "YOUR PERSPECTIVE" not in system_of(request)
        assert "EVALUATION CRITERIA" not in system_of(request)
    model = ViewModel()
    for event in events:
        model.apply(event)
    assert "⚠ criteria not generated" in "".join(t for _, t in model.pane("alice").runs)


async def test_a_generation_past_its_size_bound_fails_alone(in_tmp):
    coordination = {"evaluation_criteria_generator": {"enabled": True, "max_chars": 1000}}
    with FakeProvider(generating(criteria=Reply(text="x" * 5000))) as fake:
        run, events = await run_team(fake, coordination)
    assert run.outcome is not None and run.outcome.status.complete
    (failed,) = [e for e in events if isinstance(e, ev.GeneratorFailed)]
    assert "passed 1000 characters" in failed.error


def changedoc_writer(request: dict) -> Reply:
    """Writes a changedoc with `[SELF]` before its first answer; the presenter says
    whether its prompt showed the winner's changedoc."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m for m in request["messages"] if m.get("role") == "tool"]
    if "new_answer" in offered and not results:
        text = f"# Change Document\n### DEC-001: units\n**Origin:** [SELF] — NEW by {request['model']}\n"
        return Reply(tool_calls=[("write_file", {"path": "tasks/changedoc.md", "content": text})])
    if offered & {"new_answer", "vote"}:
        return cooperative_agent(request)
    if "<changedoc>" in system_of(request):
        return Reply(text="Final answer; the changedoc was in view.")
    return Reply(text="Final answer; no changedoc in view.")


async def test_the_changedoc_is_asked_for_snapshotted_and_shown_to_the_presenter(in_tmp):
    with FakeProvider(changedoc_writer) as fake:
        run, _ = await run_team(fake, {"enable_changedoc": True}, cwd=True)
        requests = coordination_requests(fake.requests)
    outcome = run.outcome
    assert outcome is not None and outcome.status.complete, outcome.reason
    first_runs = [r for r in requests if "(no answers available yet)" in first_user(r)]
    assert {r["model"] for r in first_runs} == {"m0", "m1", "m2"}
    for request in first_runs:
        assert "CHANGEDOC (decision journal): before you start" in system_of(request)
    voters = [r for r in requests if any(t["function"]["name"] == "vote" for t in r["tools"])]
    assert voters and all("peers/<label>/tasks/changedoc.md" in system_of(r) for r in voters)
    # In each answer's snapshot, with [SELF] stamped as the answer's label.
    store = next((in_tmp / ".massgen" / "snapshots").iterdir())
    for agent in IDS:
        label = f"{outcome.labels[agent]}.1"
        manifest = json.loads((store / "manifests" / f"{label}.json").read_text())
        digest = manifest["files"]["tasks/changedoc.md"][0]
        stored = (store / "objects" / digest[:2] / digest).read_text()
        assert f"**Origin:** {label} — NEW" in stored and "[SELF]" not in stored
    assert outcome.answer == "Final answer; the changedoc was in view."
    final = run.log_dir / "final" / "workspace" / "tasks" / "changedoc.md"
    assert f"**Origin:** {outcome.winner_label} — NEW" in final.read_text()


AGENT = "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5%s}\n"


def load_text(tmp_path: Path, text: str):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return load_config(path)


def test_the_predecessors_blocks_load_as_typed_config(tmp_path):
    text = AGENT % "" + (
        "orchestrator:\n  coordination:\n"
        "    persona_generator: {enabled: true, diversity_mode: methodology,"
        " after_first_answer: keep, persist_across_turns: true}\n"
        "    evaluation_criteria_generator: {enabled: true, min_criteria: 3, max_criteria: 5}\n"
        "    evolving_criteria: true\n"
    )
    config = load_text(tmp_path, text)
    coordination = config.orchestrator.coordination
    assert coordination.persona_generator.diversity_mode == "methodology"
    assert coordination.persona_generator.after_first_answer == "keep"
    assert coordination.evaluation_criteria_generator.max_criteria == 5


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("persona_generator: {enabled: true, diversity_mode: random}", "diversity_mode"),
        ("persona_generator: {enabled: true, after_first_answer: forget}", "after_first_answer"),
        ("persona_generator: {enabled: true, backend: {type: openai}}", "first agent's model"),
        (
            "evaluation_criteria_generator: {enabled: true, min_criteria: 8, max_criteria: 5}",
            "min_criteria (8) is above max_criteria (5)",
        ),
    ],
)
def test_bad_generator_config_is_refused_by_its_key(tmp_path, block, expected):
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, AGENT % "" + f"orchestrator:\n  coordination:\n    {block}\n")
    message = str(caught.value)
    assert expected in message and "orchestrator.coordination" in message


def test_changedoc_without_a_workspace_loads_with_a_note(tmp_path):
    from massgen.config.predecessor import translate

    raw = {
        "agents": [{"id": "a", "backend": {"type": "openai"}}],
        "orchestrator": {"coordination": {"enable_changedoc": True}},
    }
    data, notes = translate(raw, "c.yaml")
    assert "enable_changedoc" not in data["orchestrator"]["coordination"]
    (note,) = notes
    assert note.path == "orchestrator.coordination.enable_changedoc" and "backend.cwd" in str(note)
    raw["agents"][0]["backend"]["cwd"] = "ws"
    data, notes = translate(raw, "c.yaml")
    assert data["orchestrator"]["coordination"]["enable_changedoc"] is True and not notes


class Paused:
    """Answers the generations, then holds every agent's call until `release` (so the
    run can be interrupted after its preparation); `policy` answers once released."""

    def __init__(self, policy) -> None:
        self.policy = policy
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: dict) -> Reply:
        if request.get("tools") and not self.release.is_set():
            self.reached.set()
            self.release.wait(10)
            return Reply(fault=Fault.server_error())
        return self.policy(request)


async def test_a_resumed_run_keeps_its_personas_and_criteria_and_asks_for_none(in_tmp):
    coordination = {
        "persona_generator": {"enabled": True},
        "evaluation_criteria_generator": {"enabled": True},
    }
    paused = Paused(generating(personas=personas_reply(), criteria=criteria_reply()))
    with FakeProvider(paused) as fake:
        loaded = load(team(fake.base_url, coordination))
        first = await interrupted(loaded, "How fast is light?", paused.reached)
        paused.policy = cooperative_agent  # a generation asked again would fail the test
        paused.release.set()
        before = len(fake.requests)
        events: list = []
        second, result = await resume(first, loaded, "How fast is light?", events)
        requests = fake.requests[before:]
    assert result.ok, result.reason
    assert not any(isinstance(e, ev.PersonaAssigned | ev.GeneratorFailed) for e in events)
    asked = [first_user(r)[:40] for r in requests if not r.get("tools")]
    assert asked and not any(a.startswith(("You are assigning", "You are writing")) for a in asked)
    labels = second.outcome.labels
    for n, agent in enumerate(IDS):
        own = [r for r in requests if r.get("tools") and r["model"] == f"m{n}"]
        assert own and "EVALUATION CRITERIA" in system_of(own[0])
        assert PERSONA.format(stem=labels[agent]) in system_of(own[0])


def test_companion_keys_without_a_meaning_here_load_with_a_note():
    from massgen.config.predecessor import translate

    raw = {
        "agents": [{"id": "a", "backend": {"type": "openai"}}],
        "orchestrator": {
            "coordination": {
                "persona_generator": {"enabled": True, "persist_across_turns": True},
                "evaluation_criteria_generator": {"enabled": True, "persist_across_turns": True},
                "evolving_criteria": True,
                "evolving_criteria_min_high_score_count": 0,  # off: no note
                "pre_collab_voting_threshold": 2,
            }
        },
    }
    data, notes = translate(raw, "c.yaml")
    coordination = data["orchestrator"]["coordination"]
    assert set(coordination) == {"persona_generator", "evaluation_criteria_generator"}
    assert coordination["persona_generator"] == {"enabled": True}
    said = {note.path: str(note) for note in notes}
    at = "orchestrator.coordination"
    assert set(said) == {
        f"{at}.evolving_criteria",
        f"{at}.pre_collab_voting_threshold",
        f"{at}.persona_generator.persist_across_turns",
        f"{at}.evaluation_criteria_generator.persist_across_turns",
    }
    assert "checklist scores" in said[f"{at}.evolving_criteria"]
    assert "afresh for each turn" in said[f"{at}.persona_generator.persist_across_turns"]
