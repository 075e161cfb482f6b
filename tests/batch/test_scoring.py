"""Scorers, answer extraction, the majority vote and the Wilson interval."""

from __future__ import annotations

import pytest

from massgen.batch.scoring import choice_letter, last_number, normalise, scorer, wilson
from massgen.batch.work import majority
from massgen.core.errors import ConfigError


def test_exact_ignores_case_punctuation_articles_and_spaces():
    exact = scorer("exact")
    assert exact.score("The  Paris!", "paris") == 1.0
    assert exact.score("Paris, France", "Paris") == 0.0
    assert normalise("An Apple.") == "apple"


@pytest.mark.parametrize(
    ("answer", "reference", "right"),
    [
        ("So she sold 72 clips.", "Natalia sold 48+24 = 72 clips.\n#### 72", True),
        ("It costs $1,000.", "#### 1000", True),
        ("First 3, then 5, so 8", "8", True),
        ("The answer is 7.0", "#### 7", True),
        ("-4 degrees", "#### -4", True),
        ("0.50 each", "0.5", True),
        ("about 71", "#### 72", False),
        ("no number at all", "#### 72", False),
    ],
)
def test_numeric_compares_the_last_number_with_gsm8k_or_a_plain_reference(answer, reference, right):
    assert scorer("numeric").score(answer, reference) == float(right)


def test_a_gsm8k_marker_beats_later_numbers():
    assert last_number("#### 12\nchecked in 2 steps") == "12"


@pytest.mark.parametrize(
    ("text", "letter"),
    [("The answer is (B).", "B"), ("C", "C"), ("I pick option d", "D"), ("(A) because", "A")],
)
def test_choice_finds_the_letter(text, letter):
    assert choice_letter(text) == letter
    assert scorer("choice").score(text, letter.lower()) == 1.0


def test_a_user_scorer_is_module_function(tmp_path, monkeypatch):
    (tmp_path / "my_scoring.py").write_text(
        "def close(answer, reference):\n    return reference in answer\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mine = scorer("my_scoring:close")
    assert mine.score("it is 42 or so", "42") == 1.0
    assert mine.score("no idea", "42") == 0.0
    assert mine.score("anything", None) is None


@pytest.mark.parametrize("spec", ["fuzzy", "no_such_module:f", "massgen.batch.scoring:nope"])
def test_an_unknown_scorer_is_a_config_error(spec):
    with pytest.raises(ConfigError, match="scorer"):
        scorer(spec)


def test_wilson_interval_matches_the_textbook_values():
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_majority_votes_on_the_extracted_answer_and_breaks_ties_by_order():
    assert majority(["so 4", "I get 5", "answer: 5", "4 it is", "no idea"], last_number) == (
        "so 4",
        2,
    )
    assert majority(["so 4", "I get 5", "answer: 5"], last_number) == ("I get 5", 2)
    assert majority(["so 4", "I get 5"], last_number) == ("so 4", 1)
    assert majority(["nothing", "either"], last_number) == ("nothing", 0)
