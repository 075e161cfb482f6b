"""Agreement ends the debate: when the independent first answers all say the same thing
under `orchestrator.agreement`, the run ends with the earliest of them, without a vote or
a presentation, and says so; otherwise it reports how many agreed."""

from __future__ import annotations

from scripted import Cues, Gate, ScriptedBackend, answer, text, vote_for

from massgen.config.schema import OrchestratorConfig
from massgen.coordination.agent import Member
from massgen.coordination.orchestrator import Orchestrator
from massgen.core import events as ev
from massgen.core.status import Status


def team(*steps_per_agent) -> tuple[list[Member], list[ScriptedBackend]]:
    backends = [ScriptedBackend(*steps) for steps in steps_per_agent]
    members = [Member(id=f"m{i}", backend=b) for i, b in enumerate(backends)]
    return members, backends


async def run(members, **settings) -> tuple:
    events: list = []
    config = OrchestratorConfig(seed=5, max_new_answers_per_agent=1, **settings)
    outcome = await Orchestrator(members, config, emit=events.append).run("48 + 24?")
    return outcome, events


async def test_agreeing_first_answers_end_the_run_without_a_vote_or_presentation():
    members, backends = team(
        [answer("48 + 24 = 72")], [answer("The total is 72.")], [answer("72 clips")]
    )
    outcome, events = await run(members, agreement="numeric")

    assert [len(b.requests) for b in backends] == [1, 1, 1]  # one call each, no vote
    assert not [e for e in events if isinstance(e, ev.VoteCast | ev.PresentationStarted)]
    first = next(e for e in events if isinstance(e, ev.AnswerPublished))
    assert (outcome.winner, outcome.answer) == (first.agent, first.content)
    assert outcome.status is Status.OK
    assert outcome.agreement.ended_run and outcome.agreement.unanimous
    assert outcome.reason == "agreement: 3 of 3 first answers agree (numeric: 72); no vote needed"
    (finished,) = [e for e in events if isinstance(e, ev.CoordinationFinished)]
    assert finished.agreement == "3 of 3 first answers agree (numeric: 72)"


async def test_a_split_team_votes_and_reports_how_many_agreed():
    members, _ = team(
        [answer("48 + 24 = 72"), vote_for("= 72")],
        [answer("The total is 72."), vote_for("= 72")],
        [answer("It is 70."), vote_for("= 72")],
    )
    outcome, events = await run(members, agreement="numeric", final_answer_strategy="winner_reuse")

    assert len([e for e in events if isinstance(e, ev.VoteCast)]) == 3
    assert not outcome.agreement.ended_run
    assert outcome.agreement.describe() == "2 of 3 first answers agree (numeric: 72)"
    assert outcome.reason.startswith("consensus")


async def test_exact_agreement_by_default_needs_the_same_text_not_the_same_number():
    members, backends = team(
        [answer("72"), vote_for("72.")],
        [answer("It is 72."), vote_for("72.")],
    )
    outcome, _ = await run(members, final_answer_strategy="winner_reuse")
    assert not outcome.agreement.ended_run  # "72" and "It is 72." differ as text
    assert [len(b.requests) for b in backends] == [2, 2]

    members, backends = team([answer("Paris.")], [answer("paris")])
    outcome, _ = await run(members)
    assert outcome.agreement.ended_run  # the same text once normalised
    assert outcome.answer == "Paris."


async def test_agreement_none_always_votes():
    members, backends = team(
        [answer("72"), vote_for("72")],
        [answer("72"), vote_for("72")],
    )
    # The same text twice: written independently, it is no echo to refuse.
    outcome, _ = await run(members, agreement="none", final_answer_strategy="winner_reuse")
    assert [len(b.requests) for b in backends] == [2, 2]
    assert not outcome.agreement.ended_run
    assert outcome.agreement.describe() == "2 of 2 first answers agree (same text)"


async def test_a_failed_agent_does_not_block_the_agreement_of_the_others():
    members, _ = team(
        [answer("It is 72.")],
        [answer("72 in all")],
        [RuntimeError("provider down")],
    )
    outcome, _ = await run(members, agreement="numeric")
    assert outcome.agreement.ended_run
    assert outcome.status is Status.DEGRADED
    assert outcome.agreement.describe() == "2 of 2 first answers agree (numeric: 72)"


async def test_free_text_models_agreeing_stop_after_their_first_answers():
    backends = [ScriptedBackend(text(f"Working {i}...\nSo the answer is 72.")) for i in range(3)]
    members = [
        Member(id=f"m{i}", backend=b, structured_actions=True) for i, b in enumerate(backends)
    ]
    outcome, _ = await run(members, agreement="numeric")
    assert outcome.agreement.ended_run
    assert outcome.answer.endswith("So the answer is 72.")


async def test_a_majority_quorum_ends_the_run_once_more_than_half_agree():
    cues = Cues()
    two = cues.after(ev.AnswerPublished, 2)
    members, backends = team(
        [answer("48 + 24 = 72")],
        [answer("The total is 72.")],
        [Gate(two, answer("It is 70."))],  # answers after the two agree: outvoted already
    )
    config = OrchestratorConfig(
        seed=5, max_new_answers_per_agent=1, agreement="numeric", agreement_quorum="majority"
    )
    outcome = await Orchestrator(members, config, emit=cues).run("48 + 24?")

    assert outcome.agreement.ended_run
    assert outcome.agreement.describe() == (
        "2 of 3 agents' first answers agree (numeric: 72), a majority"
    )
    assert outcome.answer == "48 + 24 = 72" and not outcome.votes
    assert [len(b.requests) for b in backends] == [1, 1, 1]  # no vote round


async def test_without_a_majority_the_quorum_team_votes_as_usual():
    members, _ = team(
        [answer("It is 72."), vote_for("72")],
        [answer("It is 70."), vote_for("72")],
        [answer("It is 71."), vote_for("72")],
    )
    outcome, _ = await run(
        members,
        agreement="numeric",
        agreement_quorum="majority",
        final_answer_strategy="winner_reuse",
    )
    assert not outcome.agreement.ended_run and len(outcome.votes) == 3
    assert outcome.answer == "It is 72."


async def test_a_ranked_split_ends_without_a_vote_on_the_largest_group():
    members, backends = team(
        [answer("It is 70.")],  # first in the config, but alone
        [answer("48 + 24 = 72")],
        [answer("The total is 72.")],
    )
    outcome, events = await run(members, agreement="numeric", when_split="rank")

    assert [len(b.requests) for b in backends] == [1, 1, 1]  # no vote round, no presenter
    assert not [e for e in events if isinstance(e, ev.VoteCast | ev.PresentationStarted)]
    assert (outcome.winner, outcome.answer) == ("m1", "48 + 24 = 72")
    assert outcome.reason.endswith("won: 2 first answers say the same")


async def test_a_three_way_split_is_ranked_by_the_configs_member_order():
    cues = Cues()
    two = cues.after(ev.AnswerPublished, 2)
    members, backends = team(
        [Gate(two, answer("It is 72."))],  # listed first, published last
        [answer("It is 70.")],
        [answer("It is 71.")],
    )
    config = OrchestratorConfig(seed=5, agreement="numeric", when_split="rank")
    outcome = await Orchestrator(members, config, emit=cues).run("48 + 24?")

    assert outcome.answer == "It is 72." and outcome.winner == "m0"
    assert [len(b.requests) for b in backends] == [1, 1, 1]
    assert outcome.reason == (
        "ranked without a vote: the 3 first answers all differ (numeric); "
        f"{outcome.winner_label} won: first in the config's member order"
    )


async def test_as_needed_asks_the_rest_only_when_the_first_majority_splits():
    staged = {"agreement": "numeric", "agreement_quorum": "majority", "when_split": "rank"}
    members, backends = team(
        [answer("48 + 24 = 72")], [answer("The total is 72.")], [answer("It is 70.")]
    )
    outcome, events = await run(members, first_answers="as_needed", **staged)
    assert [len(b.requests) for b in backends] == [1, 1, 0]  # the third is never asked
    assert outcome.agreement.ended_run and outcome.answer == "48 + 24 = 72"
    assert {e.agent for e in events if isinstance(e, ev.AgentStarted)} == {"m0", "m1"}

    members, backends = team(
        [answer("It is 71.")], [answer("48 + 24 = 72")], [answer("The total is 72.")]
    )
    outcome, events = await run(members, first_answers="as_needed", **staged)
    assert [len(b.requests) for b in backends] == [1, 1, 1]  # split: the third decides
    assert outcome.answer == "48 + 24 = 72" and outcome.agreement.ended_run
    started = [e for e in events if isinstance(e, ev.AgentStarted)]
    assert started[-1].agent == "m2"  # only after both first answers were in,
    assert started[-1].answers_in_view == ()  # and as blind to them as they were
    assert "It is 71." not in str(backends[2].requests[0])  # m0's answer


async def test_as_needed_asks_the_next_member_when_a_first_one_fails():
    members, backends = team([RuntimeError("down")], [answer("72")], [answer("It is 72.")])
    outcome, _ = await run(
        members, first_answers="as_needed", agreement="numeric", agreement_quorum="majority"
    )
    assert [len(b.requests) for b in backends] == [1, 1, 1]
    assert outcome.agreement.ended_run and outcome.status is Status.DEGRADED


async def test_as_needed_changes_nothing_without_the_majority_quorum():
    members, backends = team(
        [answer("48 + 24 = 72")], [answer("The total is 72.")], [answer("72 clips")]
    )
    outcome, _ = await run(members, first_answers="as_needed", agreement="numeric")
    assert [len(b.requests) for b in backends] == [1, 1, 1]  # all must agree: all are asked
    assert outcome.agreement.unanimous
