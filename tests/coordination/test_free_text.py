"""Reason freely, then act: a model without native tool calling writes its turn as text.

Its first answer is the question alone, answered freely (as a single call would be); a
later turn ends with `VOTE: <label>` or `NEW ANSWER`; a turn without that line gets one
short constrained call that picks the action, and the text stays the answer or reason.
"""

from __future__ import annotations

import re

from scripted import ScriptedBackend, label_of, text

from massgen.config.schema import OrchestratorConfig
from massgen.coordination import actions
from massgen.coordination.agent import Member
from massgen.coordination.free_text import REASON_MAX_CHARS, read_decision
from massgen.coordination.orchestrator import Orchestrator
from massgen.core import events as ev

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in all?"
WORKING = "In May she sold 48 / 2 = 24.\nIn all: 48 + 24 = 72.\n\n**72**"


def voting(fragment: str, reasoning: str = "Checked: 48 + 24 = 72.") -> object:
    return lambda request: text(f"{reasoning}\nVOTE: {label_of(request, fragment)}")


def settings(**overrides) -> OrchestratorConfig:
    return OrchestratorConfig(
        seed=3,
        max_new_answers_per_agent=1,
        agreement="none",
        final_answer_strategy="winner_reuse",
        **overrides,
    )


async def test_a_first_answer_is_the_question_alone_answered_in_free_text():
    a = ScriptedBackend(text(WORKING), voting("72"))
    b = ScriptedBackend(text("It is 70."), voting("72"))
    members = [Member(id=i, backend=s, structured_actions=True) for i, s in (("a", a), ("b", b))]
    events: list = []
    outcome = await Orchestrator(members, settings(), emit=events.append).run(QUESTION)

    first = a.requests[0]
    # What a single call sends: no JSON schema, no coordination rules, the question alone,
    # and no system message at all (an empty one would displace a chat template's default
    # system prompt, and the answer would no longer be the member's single-call answer).
    assert first.json_schema is None
    assert [(m.role, m.content) for m in first.messages] == [("user", QUESTION)]
    # The answer keeps its newlines and Markdown, as the model wrote it.
    published = [e.content for e in events if isinstance(e, ev.AnswerPublished)]
    assert WORKING in published
    assert outcome.answer == WORKING
    # Views render the text as prose, not as a JSON action being decoded.
    assert not any(e.json_actions for e in events if isinstance(e, ev.AgentStarted))


async def test_a_first_answer_keeps_the_members_own_system_message_and_nothing_else():
    a = ScriptedBackend(text(WORKING), voting("72"))
    b = ScriptedBackend(text("It is 70."), voting("72"))
    members = [
        Member(id="a", backend=a, structured_actions=True, system_message="You are terse."),
        Member(id="b", backend=b, structured_actions=True),
    ]
    await Orchestrator(members, settings(), emit=lambda event: None).run(QUESTION)

    assert [(m.role, m.content) for m in a.requests[0].messages] == [
        ("system", "You are terse."),
        ("user", QUESTION),
    ]


async def test_a_vote_line_ends_the_turn_and_the_reasoning_is_its_reason():
    a = ScriptedBackend(text(WORKING), voting("72", "Both add up; the first is right."))
    b = ScriptedBackend(text("It is 70."), voting("72"))
    members = [Member(id=i, backend=s, structured_actions=True) for i, s in (("a", a), ("b", b))]
    events: list = []
    outcome = await Orchestrator(members, settings(), emit=events.append).run(QUESTION)

    votes = [e for e in events if isinstance(e, ev.VoteCast)]
    assert {v.target for v in votes} == {"a"}
    assert "Both add up; the first is right." in {v.reason for v in votes}
    assert outcome.winner == "a"
    # Two calls each: the answer and the vote; no constrained call was needed.
    assert len(a.requests) == len(b.requests) == 2
    assert all(r.json_schema is None for r in a.requests + b.requests)
    vote_turn = a.requests[1]
    rules = vote_turn.messages[0].content
    assert "`VOTE:`" in rules
    # The rules name no label: small models copied an example label as their whole vote.
    assert not re.search(r"agent\d+\.\d+", rules)


async def test_a_turn_without_a_decision_line_is_decided_by_a_short_constrained_call():
    reasoning = "The first answer halves 48 correctly and adds: 72 is right."
    a = ScriptedBackend(
        text(WORKING),
        text(reasoning),  # no VOTE line
        lambda request: text(f'{{"action": "vote", "agent_id": "{_offered(request)[0]}"}}'),
    )
    b = ScriptedBackend(text("It is 70."), voting("72"))
    members = [Member(id=i, backend=s, structured_actions=True) for i, s in (("a", a), ("b", b))]
    events: list = []
    await Orchestrator(members, settings(), emit=events.append).run(QUESTION)

    decision = a.requests[2]
    schema = decision.json_schema
    # Only the choice is constrained: no answer text and no reason inside JSON.
    assert schema["properties"]["action"] == {"const": "vote"}
    assert set(schema["properties"]) == {"action", "agent_id"}
    assert decision.messages[-2].content == reasoning  # it reads what it wrote
    (vote,) = [e for e in events if isinstance(e, ev.VoteCast) and e.agent == "a"]
    assert vote.reason == reasoning
    # The decision's JSON is not streamed as the agent's text.
    assert not any(
        isinstance(e, ev.TextDelta) and e.agent == "a" and '"action"' in e.text for e in events
    )


async def test_json_actions_remain_when_free_text_is_switched_off():
    from scripted import vote_for

    def json_answer(content: str) -> list:
        import json

        return text(json.dumps({"action": "new_answer", "content": content}))

    def json_vote(fragment: str):
        import json

        def step(request):
            return text(json.dumps({"action": "vote", "agent_id": label_of(request, fragment)}))

        return step

    a = ScriptedBackend(json_answer("72"), json_vote("72"))
    b = ScriptedBackend(json_answer("70"), json_vote("72"))
    assert vote_for  # the tool-call form of the same vote, for models with tool calling
    members = [Member(id=i, backend=s, structured_actions=True) for i, s in (("a", a), ("b", b))]
    outcome = await Orchestrator(members, settings(free_text_actions=False)).run(QUESTION)
    assert outcome.winner == "a"
    assert all(r.json_schema is not None for r in a.requests)


def _offered(request) -> list[str]:
    import re

    return re.findall(r"<(agent\d+\.\d+)>\n", request.messages[1].content)


# --- reading the decision line ---------------------------------------------------------------


def test_the_decision_line_is_read_from_the_end_in_the_forms_small_models_write():
    labels = ["agent1.1", "agent2.1"]
    cases = {
        "Fine.\nVOTE: agent2.1": actions.CastVote("agent2.1", "Fine."),
        "Fine.\n**Vote: agent2.1**": actions.CastVote("agent2.1", "Fine."),
        "Fine.\nVOTE: `agent1`": actions.CastVote("agent1.1", "Fine."),
        "Better: 72.\n\nNEW ANSWER": actions.NewAnswer("Better: 72."),
    }
    for reply, expected in cases.items():
        assert read_decision(reply, labels, can_answer=True) == expected, reply
    assert read_decision("I think agent1.1 is right.", labels, can_answer=True) is None
    # A vote-only turn cannot publish, so NEW ANSWER decides nothing there.
    assert read_decision("72.\nNEW ANSWER", labels, can_answer=False) is None
    # With nothing to vote on, the whole text is the answer.
    assert read_decision("72\nNEW ANSWER", [], can_answer=True) == actions.NewAnswer("72")
    assert isinstance(read_decision("  ", labels, can_answer=True), actions.Invalid)


def test_a_long_reasoning_gives_a_bounded_reason_ending_with_its_conclusion():
    reply = "step. " * 200 + "So agent1.1 is right.\nVOTE: agent1.1"
    vote = read_decision(reply, ["agent1.1"], can_answer=False)
    assert isinstance(vote, actions.CastVote)
    assert len(vote.reason) <= REASON_MAX_CHARS
    assert vote.reason.endswith("So agent1.1 is right.")
