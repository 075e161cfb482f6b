"""Scoring answers: built-in scorers, a user's `module:function`, and the interval.

A scorer pairs `extract(text) -> str | None` (what self-consistency votes on) with
`score(answer, reference) -> float` in [0, 1]. A user function `f(answer, reference)`
returning a bool or a number is a scorer whose extraction is the normalised text.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass

from massgen.batch import code_scoring
from massgen.core.answers import choice_letter, last_number, normalise
from massgen.core.errors import ConfigError

BUILT_IN = ("exact", "numeric", "choice", "code")


@dataclass(frozen=True, slots=True)
class Scorer:
    name: str
    extract: Callable[[str], str | None]
    compare: Callable[[str, str], float]

    def score(self, answer: str, reference: str | None) -> float | None:
        """None when there is no reference to score against."""
        if reference is None:
            return None
        return float(self.compare(answer, reference))

    @property
    def equivalence(self) -> str:
        """The `orchestrator.agreement` that matches this scorer: its own name for a
        built-in one, else `none` (a user's function says nothing about equivalence)."""
        return self.name if self.name in BUILT_IN else "none"


# --- the scorers -----------------------------------------------------------------------------


def _exact(answer: str, reference: str) -> float:
    return float(normalise(answer) == normalise(reference))


def _numeric(answer: str, reference: str) -> float:
    got, want = last_number(answer), last_number(reference)
    return float(got is not None and got == want)


def _choice(answer: str, reference: str) -> float:
    got, want = choice_letter(answer), choice_letter(reference) or reference.strip().upper()
    return float(got is not None and got == want)


_SCORERS = {
    "exact": Scorer("exact", normalise, _exact),
    "numeric": Scorer("numeric", last_number, _numeric),
    "choice": Scorer("choice", choice_letter, _choice),
    # Runs the answer's code against hidden tests in the sandbox (`code_scoring.py`).
    "code": Scorer("code", code_scoring.normalised, code_scoring.score),
}


def scorer(spec: str) -> Scorer:
    """A built-in scorer by name or a user function as `module:function`. Raises ConfigError."""
    if spec in _SCORERS:
        return _SCORERS[spec]
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            f"unknown scorer {spec!r}",
            fix=f"use one of {', '.join(BUILT_IN)} or module:function",
        )
    try:
        function = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise ConfigError(
            f"scorer {spec!r} not found ({error})",
            fix="the module must be importable (on PYTHONPATH) and define the function",
        ) from None
    if not callable(function):
        raise ConfigError(f"scorer {spec!r} is not a function")
    return Scorer(spec, normalise, lambda answer, reference: float(function(answer, reference)))


# --- statistics ------------------------------------------------------------------------------


def wilson(successes: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion; (0, 1) with no trials. It stays
    inside [0, 1] and behaves at 0/n and n/n, where the normal interval does not."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
