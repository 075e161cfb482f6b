"""Question paraphrases (`coordination/aids/paraphrases.py`, `question_paraphraser`) in team runs
on the fake provider: which phrasing each agent's user message holds, that the presenter
and the log keep the original, that a failed generation leaves every agent the original,
and that the predecessor's `orchestrator.dspy` block loads as this."""

from __future__ import annotations

import asyncio
import json

import pytest
import yaml
from resumed_runs import interrupted, resume
from shown import shown
from teams import member

from massgen.api import TeamRun
from massgen.config.predecessor import translate
from massgen.coordination.aids import paraphrases
from massgen.coordination.aids.generation import GenerationFailed
from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.record.journal import read_journal
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Fault, Reply, cooperative_agent

IDS = ("alice", "bob", "carol")
QUESTION = "How fast does light travel in a vacuum, in kilometres per second?"
PHRASINGS = (
    "What is the speed of light in vacuum, expressed in km per second?",
    "In a vacuum, how many kilometres does light cover each second?",
    "Give the velocity of light through empty space in kilometres per second.",
)
TAG = "<PARAPHRASED MESSAGE>"


def first_user(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def is_generation(request: dict) -> bool:
    return first_user(request).startswith("You are rephrasing a user's request")


def rephrasing(reply: Reply | None):
    """Answers the rephrasing call with `reply` (a server error when None), then cooperates."""

    def policy(request: dict) -> Reply:
        if is_generation(request):
            return reply or Reply(fault=Fault.server_error())
        return cooperative_agent(request)

    return policy


def phrased(texts=PHRASINGS) -> Reply:
    return Reply(text="```json\n" + json.dumps({"paraphrases": list(texts)}) + "\n```")


def team(base_url: str, paraphraser: dict) -> dict:
    agents = [member(agent, base_url, f"m{n}") for n, agent in enumerate(IDS)]
    coordination = {"question_paraphraser": {"enabled": True, **paraphraser}}
    orchestrator = {"seed": 3, "max_new_answers_per_agent": 1, "coordination": coordination}
    return {"agents": agents, "orchestrator": orchestrator}


async def run_team(fake: FakeProvider, paraphraser: dict) -> tuple[TeamRun, list]:
    events: list = []
    run = TeamRun(load(team(fake.base_url, paraphraser)), QUESTION, sinks=[events.append])
    await run.execute()
    return run, events


def agent_calls(requests: list[dict], n: int) -> list[dict]:
    """Agent n's coordination calls (the generation and presentation calls offer no tools)."""
    return [r for r in requests if r.get("tools") and r["model"] == f"m{n}"]


async def test_each_agent_reads_its_own_phrasing_and_the_presenter_the_original(in_tmp):
    with FakeProvider(rephrasing(phrased())) as fake:
        run, events = await run_team(fake, {"strategy": "diverse"})
        requests = list(fake.requests)
    assert run.outcome is not None and run.outcome.status.complete, run.outcome
    (generation,) = [r for r in requests if is_generation(r)]
    assert generation["model"] == "m0" and not generation.get("tools")
    asked = first_user(generation)
    assert QUESTION in asked and "3 times" in asked
    assert paraphrases.STRATEGIES["diverse"] in asked
    for n in range(len(IDS)):
        calls = agent_calls(requests, n)
        assert calls
        for request in calls:  # every run, not only the first
            user = first_user(request)
            assert f"<ORIGINAL MESSAGE>\n{QUESTION}\n<END OF ORIGINAL MESSAGE>" in user
            assert user.index(QUESTION) < user.index(TAG)
            assert PHRASINGS[n] in user
            assert not any(p in user for p in PHRASINGS if p != PHRASINGS[n])
    # The presenter, the recorded question and the answer's record keep the original.
    presenting = [r for r in requests if not r.get("tools") and not is_generation(r)]
    assert presenting
    for request in presenting:
        text = json.dumps(request["messages"])
        assert TAG not in text and not any(p in text for p in PHRASINGS)
    (started,) = [e for e in events if isinstance(e, ev.RunStarted)]
    assert started.question == QUESTION
    assigned = [e for e in events if isinstance(e, ev.QuestionParaphrased)]
    assert [(e.agent, e.paraphrase, e.variant) for e in assigned] == [
        (agent, PHRASINGS[n], n) for n, agent in enumerate(IDS)
    ]
    # Shown in the live view and the plain view, recorded in the journal and a file.
    printed, panes = shown(events)
    assert f"reads the question as · {PHRASINGS[1]}" in panes["bob"]
    assert f"[carol] reads the question as: {PHRASINGS[2]}" in printed
    journal = read_journal(run.log_dir / "events.jsonl")
    assert [e for e in journal if isinstance(e, ev.QuestionParaphrased)] == assigned
    saved = yaml.safe_load((run.log_dir / "question_paraphrases.yaml").read_text())
    assert saved == dict(zip(IDS, PHRASINGS, strict=True))


async def test_fewer_phrasings_than_agents_go_round_in_turn(in_tmp):
    with FakeProvider(rephrasing(phrased(PHRASINGS[:2]))) as fake:
        run, events = await run_team(fake, {"variants": 2})
        requests = list(fake.requests)
    assert run.outcome is not None and run.outcome.status.complete
    (generation,) = [r for r in requests if is_generation(r)]
    assert "2 times" in first_user(generation)
    got = {e.agent: e.paraphrase for e in events if isinstance(e, ev.QuestionParaphrased)}
    assert got == {"alice": PHRASINGS[0], "bob": PHRASINGS[1], "carol": PHRASINGS[0]}
    assert all(PHRASINGS[0] in first_user(r) for r in agent_calls(requests, 2))


async def test_no_more_phrasings_are_asked_for_than_there_are_agents(in_tmp):
    with FakeProvider(rephrasing(phrased())) as fake:
        await run_team(fake, {"variants": 8})
        (generation,) = [r for r in fake.requests if is_generation(r)]
    assert "3 times" in first_user(generation)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (None, ""),  # the provider fails (500, retried, then given up)
        (Reply(text="Sure! Light is fast."), "no JSON object"),
        (phrased([QUESTION, " ", "Why?", QUESTION.upper(), "x" * 400]), "none of the 5"),
    ],
    ids=["provider-error", "not-json", "none-usable"],
)
async def test_a_failed_generation_leaves_every_agent_the_original(in_tmp, reply, why):
    with FakeProvider(rephrasing(reply)) as fake:
        run, events = await run_team(fake, {})
        requests = list(fake.requests)
    assert run.outcome is not None and run.outcome.status.complete, run.outcome.reason
    assert run.outcome.answer
    (failed,) = [e for e in events if isinstance(e, ev.GeneratorFailed)]
    assert failed.what == "paraphrases" and failed.agent == "alice" and why in failed.error
    assert not any(isinstance(e, ev.QuestionParaphrased) for e in events)
    calls = [r for r in requests if r.get("tools")]
    assert {r["model"] for r in calls} == {"m0", "m1", "m2"}
    for request in calls:
        assert QUESTION in first_user(request) and TAG not in first_user(request)


async def test_a_generation_past_its_time_bound_leaves_the_original(in_tmp):
    stalled = Reply(text=json.dumps({"paraphrases": list(PHRASINGS)}), fault=Fault(stall_seconds=5))
    with FakeProvider(rephrasing(stalled)) as fake:
        run, events = await asyncio.wait_for(run_team(fake, {"timeout_seconds": 0.3}), 30)
    assert run.outcome is not None and run.outcome.status.complete
    (failed,) = [e for e in events if isinstance(e, ev.GeneratorFailed)]
    assert "no reply within 0.3s" in failed.error


def test_parse_keeps_the_usable_phrasings_in_order():
    text = json.dumps(
        {"paraphrases": [PHRASINGS[0], QUESTION, PHRASINGS[0].upper(), 7, "", PHRASINGS[1]]}
    )
    assert paraphrases.parse(text, QUESTION, 3) == PHRASINGS[:2]
    assert paraphrases.parse(json.dumps({"paraphrases": list(PHRASINGS)}), QUESTION, 1) == (
        PHRASINGS[0],
    )
    with pytest.raises(GenerationFailed, match="not a list"):
        paraphrases.parse('{"paraphrases": "one"}', QUESTION, 3)


def dspy_config(**block) -> dict:
    agent = {"id": "g", "backend": {"type": "gemini", "model": "gemini-2.5-flash"}}
    other = {"id": "o", "backend": {"type": "openai", "model": "gpt-5-nano"}}
    return {"agents": [agent, other], "orchestrator": {"dspy": block}}


def test_the_predecessors_dspy_block_loads_as_question_paraphrases(tmp_path):
    raw = dspy_config(
        enabled=True,
        backend={"type": "gemini", "model": "gemini-2.5-flash", "temperature": 0.7},
        num_variants=2,
        strategy="Conservative",
        use_chain_of_thought=True,
        cache_enabled=True,
        semantic_threshold=0.85,
    )
    data, notes = translate(raw, "c.yaml")
    assert "dspy" not in data["orchestrator"]
    assert data["orchestrator"]["coordination"]["question_paraphraser"] == {
        "enabled": True,
        "variants": 2,
        "strategy": "conservative",
    }
    said = {note.path: str(note) for note in notes}
    at = "orchestrator.dspy"
    assert set(said) == {
        at,
        f"{at}.backend",
        f"{at}.use_chain_of_thought",
        f"{at}.cache_enabled",
        f"{at}.semantic_threshold",
    }
    assert "question_paraphraser" in said[at]
    assert "`temperature` is not used" in said[f"{at}.backend"]
    # ... and validates as typed config.
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(raw))
    from massgen.config import load_config

    typed = load_config(path).orchestrator.coordination.question_paraphraser
    assert (typed.enabled, typed.variants, typed.strategy) == (True, 2, "conservative")


def test_a_dspy_block_that_is_off_asks_for_nothing():
    data, notes = translate(dspy_config(enabled=False, num_variants=3), "c.yaml")
    assert data["orchestrator"] == {} and not notes


@pytest.mark.parametrize(
    ("block", "path", "expected"),
    [
        (
            {"backend": {"type": "openai", "model": "gpt-5-nano"}},
            "orchestrator.dspy.backend",
            "another model than the first agent's (type 'openai', model 'gpt-5-nano')",
        ),
        ({"strategy": "wild"}, "orchestrator.dspy.strategy", "'wild' is not a strategy"),
        ({"num_variants": 40}, "orchestrator.dspy.num_variants", "Use 1 to 10"),
        ({"optimizer": "mipro"}, "orchestrator.dspy.optimizer", "not a key"),
    ],
)
def test_a_dspy_block_asking_for_what_is_not_here_is_refused_by_its_key(block, path, expected):
    with pytest.raises(ConfigError) as caught:
        translate(dspy_config(enabled=True, **block), "c.yaml")
    assert caught.value.path == path and expected in str(caught.value)


async def test_a_resumed_run_keeps_its_phrasings_and_asks_for_none(in_tmp):
    import threading

    reached, release = threading.Event(), threading.Event()
    policy = rephrasing(phrased())

    def paused(request: dict) -> Reply:
        """Rephrases, then holds every agent's call until released (to interrupt the run)."""
        if request.get("tools") and not release.is_set():
            reached.set()
            release.wait(10)
            return Reply(fault=Fault.server_error())
        return policy(request)

    with FakeProvider(paused) as fake:
        loaded = load(team(fake.base_url, {}))
        first = await interrupted(loaded, QUESTION, reached)
        policy = cooperative_agent  # a rephrasing asked again would fail the run's checks
        release.set()
        before = len(fake.requests)
        events: list = []
        _, result = await resume(first, loaded, QUESTION, events)
        requests = fake.requests[before:]
    assert result.ok, result.reason
    assert not any(is_generation(r) for r in requests)
    assert not any(isinstance(e, ev.QuestionParaphrased | ev.GeneratorFailed) for e in events)
    for n in range(len(IDS)):
        calls = agent_calls(requests, n)
        assert calls and all(PHRASINGS[n] in first_user(r) for r in calls)
