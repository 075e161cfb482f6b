"""What a short answer says: the number, the option letter, or the normalised text.

Used to judge whether two answers agree (`orchestrator.agreement`) and, in `massgen
batch`, to score answers and to vote in self-consistency. Each extractor returns None
when the text says nothing it can read, so an answer without a number never "agrees".
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

Extract = Callable[[str], str | None]

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_GSM8K = re.compile(r"####\s*(-?[\d,]*\.?\d+)")
_CHOICE_MARKED = re.compile(
    r"(?:answer|option|choice)\s*(?:is|:)?\s*\(?([A-J])\)?(?![A-Za-z])", re.IGNORECASE
)
_CHOICE_ALONE = re.compile(r"(?<![A-Za-z])\(?([A-J])\)?(?![A-Za-z])")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalise(text: str) -> str:
    """Lower case, no punctuation, articles or extra spaces (SQuAD's normalisation)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalised_text(text: str) -> str | None:
    """`normalise`, or None for text with nothing in it."""
    return normalise(text) or None


def last_number(text: str) -> str | None:
    """The last number in `text`, canonical ("1,000.50" → "1000.5"); a GSM8K-style
    `#### N` wins over numbers elsewhere."""
    marked = _GSM8K.findall(text)
    found = marked or _NUMBER.findall(text)
    return _canonical(found[-1]) if found else None


def _canonical(number: str) -> str | None:
    try:
        value = Decimal(number.replace(",", ""))
    except InvalidOperation:
        return None
    if value == value.to_integral_value():
        return str(value.quantize(Decimal(1)))
    return format(value.normalize(), "f")


def choice_letter(text: str) -> str | None:
    """The option letter an answer picks: "the answer is (B)" → "B"; else the last lone
    capital letter A-J."""
    marked = _CHOICE_MARKED.findall(text)
    if marked:
        return marked[-1].upper()
    alone = _CHOICE_ALONE.findall(text.strip())
    return alone[-1].upper() if alone else None


# The equivalences a run can judge agreement by (`orchestrator.agreement`), by name.
EQUIVALENCES: dict[str, Extract] = {
    "exact": normalised_text,
    "numeric": last_number,
    "choice": choice_letter,
}
