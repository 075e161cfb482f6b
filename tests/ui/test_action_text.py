"""A JSON action streams into a panel as the answer being written, not as JSON."""

from __future__ import annotations

import json
import random

import pytest

from massgen.ui.action_text import ActionText


def _fed(text: str, seed: int) -> str:
    """`text` fed in random pieces, as a model's stream arrives."""
    rng, decoder, out, at = random.Random(seed), ActionText(), [], 0
    while at < len(text):
        size = rng.randint(1, 7)
        out.append(decoder.feed(text[at : at + size]))
        at += size
    return "".join(out)


ANSWER = 'Paris.\n\nIt became the capital "by degrees" — a \\ path, 🗼 included.\tEnd'


@pytest.mark.parametrize("seed", range(20))
def test_an_answer_streams_as_its_text_whatever_the_chunking(seed):
    action = json.dumps({"action": "new_answer", "content": ANSWER})
    assert _fed(action, seed) == ANSWER


@pytest.mark.parametrize("seed", range(5))
def test_non_ascii_escapes_and_surrogate_pairs_come_out_as_characters(seed):
    action = json.dumps({"action": "new_answer", "content": ANSWER}, ensure_ascii=True)
    assert "\\ud83d" in action  # the tower is a surrogate pair on the wire
    assert _fed(action, seed) == ANSWER


def test_a_vote_shows_nothing_its_marker_says_it():
    vote = json.dumps({"action": "vote", "agent_id": "agent2.1", "reason": "clearer"})
    assert ActionText().feed(vote) == ""


def test_prose_around_the_object_passes_through_and_keys_stay_hidden():
    text = 'Let me answer.\n{"content": "Paris", "action": "new_answer"}\nDone.'
    assert ActionText().feed(text) == "Let me answer.\nParis\nDone."


def test_nested_values_named_content_are_not_the_answer():
    text = json.dumps({"action": "new_answer", "meta": {"content": "no"}, "content": "yes"})
    assert ActionText().feed(text) == "yes"


def test_a_retried_action_shows_each_attempt():
    decoder = ActionText()
    first = decoder.feed('{"action": "new_answer", "content": "draft"}')
    second = decoder.feed('{"action":"new_answer","content":"final"}')
    assert (first, second) == ("draft", "final")
