"""Rejecting answers that repeat an existing one, so agents vote instead of echoing."""

from __future__ import annotations

import re
from collections.abc import Iterable

from massgen.coordination.board import Answer

# Word-set Jaccard similarity at or above which a new answer counts as a repeat.
THRESHOLDS = {"lenient": 0.9, "balanced": 0.7, "strict": 0.5}

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def similarity(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def repeated(content: str, existing: Iterable[Answer], requirement: str) -> str | None:
    """A reason to reject `content`, or None when it is new enough."""
    threshold = THRESHOLDS[requirement]
    for answer in existing:
        if " ".join(content.split()) == " ".join(answer.content.split()):
            return f"This answer is identical to {answer.label}. Vote for it instead."
        score = similarity(content, answer.content)
        if score >= threshold:
            return (
                f"This answer is nearly identical to {answer.label} "
                f"(word overlap {score:.0%}). Vote for it, or make a substantive improvement."
            )
    return None
