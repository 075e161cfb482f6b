"""Repeats are refused with a reason that names the answer to vote for instead."""

from __future__ import annotations

from massgen.coordination.board import Answer
from massgen.coordination.novelty import repeated, similarity

PARIS = Answer("bob", 1, "agent2.1", "The capital of France is Paris.", 1)


def test_the_same_text_up_to_spacing_is_identical():
    reason = repeated("The  capital of France\nis Paris.", [PARIS], "lenient")
    assert reason is not None and "identical to agent2.1" in reason


def test_a_near_copy_is_refused_only_as_strictly_as_asked():
    near = "The capital of France is Paris, a city."
    assert 0.7 <= similarity(near, PARIS.content) < 0.9
    assert repeated(near, [PARIS], "lenient") is None
    reason = repeated(near, [PARIS], "balanced")
    assert reason is not None and "nearly identical to agent2.1" in reason


def test_a_different_answer_passes():
    assert repeated("Lyon is the largest city in the Rhône.", [PARIS], "strict") is None
    assert repeated("anything", [], "strict") is None
