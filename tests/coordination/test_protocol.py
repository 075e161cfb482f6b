"""The coordination protocol, on scripted in-process backends."""

from __future__ import annotations

import asyncio

import pytest
from scripted import Cues, Gate, ScriptedBackend, answer, text, vote, vote_for

from massgen.config.schema import OrchestratorConfig
from massgen.coordination.agent import Member
from massgen.coordination.orchestrator import Orchestrator
from massgen.core import events as ev
from massgen.core.errors import ProviderUnavailable
from massgen.core.types import TextChunk


def team(**backends: ScriptedBackend) -> list[Member]:
    return [Member(id=name, backend=backend) for name, backend in backends.items()]


def orchestrator(members, events=None, deadline=10, **settings) -> Orchestrator:
    sink = events if callable(events) else events.append if events is not None else None
    sink = sink or (lambda e: None)
    config = OrchestratorConfig(seed=7, **settings)
    return Orchestrator(members, config, deadline_seconds=deadline, emit=sink)


def of_kind(events, kind):
    return [e for e in events if isinstance(e, kind)]


async def test_team_converges_and_winner_presents():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 3)
    a = ScriptedBackend(answer("Paris is the capital."), Gate(all_in, vote_for("Seine")), text("A"))
    b = ScriptedBackend(
        answer("Paris is the capital, on the Seine."),
        Gate(all_in, vote_for("Seine")),
        text("B final"),
    )
    c = ScriptedBackend(answer("It is Lyon."), Gate(all_in, vote_for("Seine")))
    events = cues.events
    outcome = await orchestrator(team(a=a, b=b, c=c), cues).run("Capital of France?")

    assert outcome.status == "ok"
    assert outcome.winner == "b"
    assert outcome.answer == "B final"
    assert sorted(outcome.tally.values(), reverse=True)[0] == 3
    assert len(of_kind(events, ev.VoteCast)) == 3
    assert isinstance(events[-1], ev.RunFinished) and events[-1].outcome.answer == "B final"
    # The winner's presentation call sees its answer and the voters' reasons.
    presentation = b.requests[-1].messages[1].content
    assert "on the Seine" in presentation and "<SELECTED ANSWER" in presentation


async def test_no_real_agent_id_reaches_a_model():
    ids = {"alice_gpt": "Answer A.", "bob_claude": "Answer B."}
    backends = {
        name: ScriptedBackend(answer(content), vote_for("Answer B."), text("done"))
        for name, content in ids.items()
    }
    members = [Member(id=n, backend=b, system_message="Be brief.") for n, b in backends.items()]
    await orchestrator(members).run("q")
    for backend in backends.values():
        for request in backend.requests:
            sent = " ".join(m.content for m in request.messages)
            sent += " ".join(str(t.parameters) for t in request.tools)
            assert "alice" not in sent and "bob" not in sent


async def test_new_answer_invalidates_votes_that_did_not_see_it():
    cues = Cues()
    all_in, two_votes = cues.after(ev.AnswerPublished, 3), cues.after(ev.VoteCast, 2)
    a = ScriptedBackend(
        answer("alpha"), Gate(all_in, vote_for("bravo")), vote_for("charlie v2"), text("A")
    )
    b = ScriptedBackend(
        answer("bravo"), Gate(all_in, vote_for("bravo")), vote_for("charlie v2"), text("B")
    )
    c = ScriptedBackend(
        answer("charlie"),
        Gate(two_votes, answer("charlie v2 is much better")),
        vote_for("charlie v2"),
        text("C final"),
    )
    outcome = await orchestrator(team(a=a, b=b, c=c), cues).run("q")

    invalidated = cues.of(ev.VoteInvalidated)
    assert {e.agent for e in invalidated} == {"a", "b"}
    assert all(e.newer_label.endswith(".2") for e in invalidated)
    assert outcome.winner == "c" and outcome.answer == "C final"
    assert len(outcome.votes) == 3


async def test_stale_vote_is_not_counted_and_the_voter_looks_again():
    cues = Cues()
    two_in, three_in = cues.after(ev.AnswerPublished, 2), cues.after(ev.AnswerPublished, 3)
    # a's vote for "bravo 1" arrives just after "bravo 2" was published: it must not count.
    a = ScriptedBackend(
        answer("alpha"),
        Gate(three_in, vote_for("bravo 1"), settle=False),
        vote_for("bravo 2"),
        text("A"),
    )
    b = ScriptedBackend(
        answer("bravo 1"), Gate(two_in, answer("bravo 2")), vote_for("bravo 2"), text("B final")
    )
    outcome = await orchestrator(team(a=a, b=b), cues).run("q")

    a_votes = [e for e in cues.of(ev.VoteCast) if e.agent == "a"]
    assert [v.target_label.endswith(".2") for v in a_votes] == [True]
    assert any(e.agent == "a" for e in cues.of(ev.AgentRestarted))
    assert outcome.winner == "b" and outcome.answer == "B final"


async def test_invalid_vote_gets_a_correction_and_a_retry():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(
        answer("alpha"), Gate(all_in, vote("agent9.9")), vote_for("alpha"), text("A")
    )
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("alpha")))
    outcome = await orchestrator(team(a=a, b=b), cues).run("q")

    rejected = cues.of(ev.ActionRejected)
    assert len(rejected) == 1 and "agent9.9" in rejected[0].reason
    correction = a.requests[-2].messages[-1]  # the retry, just before the presentation
    assert correction.role == "tool" and "Invalid agent_id" in correction.content
    assert outcome.winner == "a"


async def test_answer_cap_leaves_only_the_vote_tool():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(answer("alpha"), Gate(all_in, vote_for("alpha")), text("A"))
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("alpha")))
    await orchestrator(team(a=a, b=b), cues, max_new_answers_per_agent=1).run("q")

    assert a.tool_names(0) == ["new_answer"]
    assert all(a.tool_names(i) == ["vote"] for i in range(1, len(a.requests) - 1))
    later_runs = [e for e in cues.of(ev.AgentStarted) if e.run > 1]
    assert later_runs and all(e.vote_only for e in later_runs)


async def test_exhausted_retries_fail_the_agent_and_the_team_carries_on():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(answer("alpha"), Gate(all_in, vote_for("alpha")), text("A"))
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("alpha")))
    c = ScriptedBackend(text("no tool"), text("still none"))
    outcome = await orchestrator(team(a=a, b=b, c=c), cues, max_invalid_action_retries=1).run("q")

    assert outcome.failed_agents.keys() == {"c"}
    assert "no valid action after 2 attempts" in outcome.failed_agents["c"]
    assert outcome.status == "degraded" and outcome.answer == "A"


async def test_failing_backend_drops_the_agent_and_says_why():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(answer("alpha"), Gate(all_in, vote_for("alpha")), text("A"))
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("alpha")))
    broken = ScriptedBackend(ProviderUnavailable("upstream exploded", provider="fake", status=503))
    outcome = await orchestrator(team(a=a, b=b, c=broken), cues).run("q")

    failure = cues.of(ev.AgentFailed)[0]
    assert failure.agent == "c" and "upstream exploded" in failure.error
    assert outcome.status == "degraded"
    assert "failed: c" in outcome.reason
    assert outcome.answer == "A"


async def test_deadline_returns_the_best_answer_and_says_so():
    never = asyncio.Event()
    a = ScriptedBackend(answer("alpha"), Gate(never, vote_for("alpha")))
    b = ScriptedBackend(Gate(never, answer("bravo")))
    events: list = []
    outcome = await orchestrator(team(a=a, b=b), events, deadline=0.05).run("q")

    assert outcome.status == "timeout"
    assert "deadline" in outcome.reason
    assert outcome.answer == "alpha"
    assert isinstance(events[-1], ev.RunFinished) and events[-1].outcome.status == "timeout"


async def test_tie_is_broken_deterministically_and_recorded():
    cues = Cues()
    first, both = cues.after(ev.AnswerPublished, 1), cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(answer("alpha"), Gate(both, vote_for("bravo")), text("A"))
    # alpha is published first, so it wins the 1-1 tie.
    b = ScriptedBackend(Gate(first, answer("bravo")), Gate(both, vote_for("alpha")), text("B"))
    outcome = await orchestrator(team(a=a, b=b), cues).run("q")

    assert outcome.winner == "a"
    assert outcome.tie_break and "earliest-published" in outcome.tie_break
    assert cues.of(ev.CoordinationFinished)[0].tie_break == outcome.tie_break


async def test_self_vote_only_breaks_ties():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 3)
    a = ScriptedBackend(answer("alpha"), Gate(all_in, vote_for("alpha")), text("A"))
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("bravo")), text("B"))
    c = ScriptedBackend(answer("charlie"), Gate(all_in, vote_for("bravo")), text("C"))
    outcome = await orchestrator(team(a=a, b=b, c=c), cues).run("q")
    assert outcome.winner == "b"
    assert outcome.tally[outcome.winner_label] == 2


async def test_single_agent_answers_once_without_voting():
    solo = ScriptedBackend(answer("The answer is 4."))
    events: list = []
    outcome = await orchestrator(team(solo=solo), events).run("2+2?")

    assert outcome.answer == "The answer is 4."
    assert solo.tool_names(0) == ["new_answer"]
    assert len(solo.requests) == 1
    assert not of_kind(events, ev.VoteCast)


async def test_duplicate_answer_is_rejected_with_a_pointer_to_vote():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(answer("The capital is Paris."), Gate(all_in, vote_for("Paris")), text("A"))
    b = ScriptedBackend(
        answer("Lyon."), Gate(all_in, answer("the capital is   Paris.")), vote_for("Paris")
    )
    outcome = await orchestrator(team(a=a, b=b), cues).run("q")

    rejected = cues.of(ev.ActionRejected)
    assert rejected and "identical to" in rejected[0].reason
    assert outcome.winner == "a"


async def test_cancelling_a_run_keeps_what_was_decided():
    never = asyncio.Event()
    a = ScriptedBackend(answer("alpha"), Gate(never, text("")))
    b = ScriptedBackend(Gate(never, text("")))
    events: list = []
    orch = orchestrator(team(a=a, b=b), events)
    task = asyncio.create_task(orch.run("q"))
    while not of_kind(events, ev.AnswerPublished):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert orch.outcome is not None
    assert orch.outcome.status == "interrupted" and orch.outcome.answer == "alpha"
    assert events[-1].outcome.status == "interrupted"


async def test_cancelling_a_run_while_its_final_answer_is_evaluated_keeps_that_answer():
    cues, never = Cues(), asyncio.Event()
    all_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(
        answer("alpha"), Gate(all_in, vote_for("alpha")), text("A final"), Gate(never, text(""))
    )
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("alpha")))
    orch = orchestrator(team(a=a, b=b), cues, coordination={"max_orchestration_restarts": 1})
    task = asyncio.create_task(orch.run("q"))
    while not of_kind(cues.events, ev.EvaluationStarted):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert orch.outcome is not None
    assert (orch.outcome.status, orch.outcome.answer) == ("interrupted", "A final")
    assert orch.outcome.reason.endswith("while the final answer was evaluated")
    assert cues.events[-1].outcome.answer == "A final"


@pytest.mark.parametrize(
    ("strategy", "calls_presenter", "instruction"),
    [
        ("winner_present", True, "as the basis"),
        ("synthesize", True, "combine the best of all answers"),
        ("winner_reuse", False, None),
    ],
)
async def test_final_presentation_strategies(strategy, calls_presenter, instruction):
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 2)
    a = ScriptedBackend(answer("alpha"), Gate(all_in, vote_for("alpha")), text("Polished alpha."))
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("alpha")))
    outcome = await orchestrator(team(a=a, b=b), cues, final_answer_strategy=strategy).run("q")

    assert outcome.winner == "a"
    if calls_presenter:
        assert outcome.answer == "Polished alpha."
        system, user = (m.content for m in a.requests[-1].messages)
        assert instruction in system and "bravo" in user  # the other answers are in view
        assert a.requests[-1].tools == ()
    else:
        assert outcome.answer == "alpha" and len(a.steps) == 1  # presentation step unused
        assert not cues.of(ev.PresentationStarted)


async def test_deadline_also_bounds_the_final_presentation():
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 2)
    never = asyncio.Event()
    a = ScriptedBackend(answer("alpha"), Gate(all_in, vote_for("alpha")), Gate(never, text("late")))
    b = ScriptedBackend(answer("bravo"), Gate(all_in, vote_for("alpha")))
    outcome = await orchestrator(team(a=a, b=b), cues, deadline=0.2).run("q")

    assert outcome.status == "timeout" and outcome.answer == "alpha"
    assert "final presentation" in outcome.reason
    assert outcome.winner == "a" and cues.of(ev.CoordinationFinished)


async def test_all_agents_failing_ends_the_run_with_no_answer_and_says_so():
    a = ScriptedBackend(ProviderUnavailable("down", provider="fake"))
    b = ScriptedBackend(ProviderUnavailable("also down", provider="fake"))
    events: list = []
    outcome = await orchestrator(team(a=a, b=b), events).run("q")
    assert outcome.status == "failed" and outcome.answer == ""
    assert outcome.failed_agents.keys() == {"a", "b"} and "all agents failed" in outcome.reason


async def test_vote_options_follow_the_viewers_shuffled_order_with_its_own_last():
    import re

    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 4)
    names = "abcd"
    backends = {
        n: ScriptedBackend(answer(f"answer {n}"), Gate(all_in, vote_for("answer a")), text(n))
        for n in names
    }
    outcome = await orchestrator(team(**backends), cues).run("q")
    peer_orders = []
    for n, backend in backends.items():
        request = next(r for r in backend.requests if any(t.name == "vote" for t in r.tools))
        enum = next(t for t in request.tools if t.name == "vote").parameters["properties"]
        shown = re.findall(r"<(agent\d+\.\d+)>", request.messages[1].content)
        assert enum["agent_id"]["enum"] == shown
        assert shown[-1] == outcome.labels[n] + ".1"  # its own answer comes last
        peer_orders.append(shown[:-1])
    assert any(order != sorted(order) for order in peer_orders)  # shuffled, not sorted


async def test_independent_first_answers_that_repeat_each_other_are_agreement_not_echoes():
    # Written without seeing a's answer, b's and c's are no echo to refuse: the three agree
    # (exact, once normalised), so the run ends with the earliest and no vote.
    a = ScriptedBackend(answer("The capital is Paris."))
    b = ScriptedBackend(answer("the capital is Paris"))
    c = ScriptedBackend(answer("The capital is Paris!"))
    outcome = await orchestrator(team(a=a, b=b, c=c), deadline=5).run("q")
    assert outcome.status == "ok" and outcome.winner == "a" and not outcome.votes
    assert outcome.agreement.ended_run
    assert [len(s.requests) for s in (a, b, c)] == [1, 1, 1]


async def test_a_later_answer_that_repeats_one_in_view_is_still_refused():
    cues = Cues()
    a = ScriptedBackend(answer("The capital is Paris."), vote_for("Paris"))
    b = ScriptedBackend(
        answer("Lyon, I think."),
        Gate(cues.after(ev.AnswerPublished, 2), answer("the capital is Paris")),
        vote_for("Paris"),
    )
    config = {"final_answer_strategy": "winner_reuse"}
    outcome = await orchestrator(team(a=a, b=b), cues, deadline=5, **config).run("q")
    assert outcome.status == "ok" and outcome.winner == "a"
    (rejected,) = [e for e in cues.events if isinstance(e, ev.ActionRejected)]
    assert "identical to" in rejected.reason


class WritesThenHangs(ScriptedBackend):
    """Call number `on_call` streams `partial`, then hangs until its run is cancelled."""

    def __init__(self, partial: str, *steps, on_call: int) -> None:
        super().__init__(*steps)
        self.partial, self.on_call, self.calls = partial, on_call, 0

    async def stream(self, request):
        self.calls += 1
        if self.calls != self.on_call:
            async for item in super().stream(request):
                yield item
            return
        yield TextChunk(self.partial)
        await asyncio.Event().wait()


async def test_a_call_cut_short_by_a_restart_still_counts_its_usage_as_an_estimate():
    cues = Cues()
    # Both answer; a starts voting and is cut off mid-stream by b's second answer (b waits
    # for a's third text delta overall: both first calls wrote one each).
    a = WritesThenHangs("x" * 400, answer("alpha"), vote_for("bravo v2"), on_call=2)
    b = ScriptedBackend(
        answer("bravo"),
        Gate(cues.after(ev.TextDelta, 3), answer("bravo v2")),
        vote_for("bravo v2"),
        text("B final"),
    )
    outcome = await orchestrator(team(a=a, b=b), cues).run("q")

    assert outcome.winner == "b" and outcome.status == "ok"
    restart = next(i for i, e in enumerate(cues.events) if isinstance(e, ev.AgentRestarted))
    cut = [e for e in cues.events[:restart] if isinstance(e, ev.UsageReported) and e.agent == "a"]
    assert [u.usage.estimated for u in cut] == [False, True]  # the answer's call, then the cut one
    assert cut[1].usage.output_tokens == 100  # 400 characters streamed before the cut
    assert cut[1].usage.input_tokens > 0  # the prompt it had read
    assert outcome.usage["a"].output_tokens == 20 + 100 + 20  # the run's totals include it
