"""What a model reads: the task, the answers in a per-viewer order, never a real agent id."""

from __future__ import annotations

from massgen.coordination import prompts
from massgen.coordination.board import Answer
from massgen.coordination.prompts import Turn

ANSWERS = [
    Answer("alice", 1, "agent3.1", "Paris.", 1),
    Answer("bob", 2, "agent1.2", "Paris, France.", 3),
    Answer("carol", 1, "agent2.1", "Paris too.", 2),
]


def test_the_viewers_own_answer_comes_last_and_peers_order_depends_on_the_seed():
    orders = {
        tuple(a.agent for a in prompts.order_for_viewer(ANSWERS, "bob", s)) for s in range(20)
    }
    assert all(order[-1] == "bob" for order in orders)
    assert len(orders) == 2  # both orders of alice and carol occur
    assert prompts.order_for_viewer(ANSWERS, "bob", 4) == prompts.order_for_viewer(
        ANSWERS, "bob", 4
    )


def test_the_user_message_shows_history_task_and_labelled_answers_without_real_ids():
    text = prompts.user_message("Capital of France?", ANSWERS, history=[Turn("Hi", "Hello")])
    assert text.index("<CONVERSATION_HISTORY>") < text.index("Capital of France?")
    assert "<agent1.2>\nParis, France.\n<end of agent1.2>" in text
    assert not any(agent in text.lower() for agent in ("alice", "bob", "carol"))
    assert "(no answers available yet)" in prompts.user_message("q", [])


def test_the_system_prompt_keeps_the_identity_and_tells_a_voter_to_vote():
    voter = prompts.system_prompt(
        "You are terse.", sensitivity="balanced", vote_only=True, single=False
    )
    assert voter.startswith("You are terse.") and "you must vote" in voter
    solo = prompts.system_prompt(None, sensitivity="balanced", vote_only=False, single=True)
    assert "new_answer" in solo and "vote" not in solo


def test_the_presentation_builds_on_the_winner_with_the_reasons_and_the_other_answers():
    system, user = prompts.presentation_messages(
        "Capital?", ANSWERS[1], ANSWERS, ["most precise"], identity=None, synthesize=False
    )
    assert "agent1.2" in system and "labels" in system
    assert "<SELECTED ANSWER agent1.2>\nParis, France." in user
    assert "- most precise" in user and "<OTHER ANSWERS" in user and "agent3.1" in user
