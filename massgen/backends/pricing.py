"""Estimated cost of a call, from the price table shipped in `prices.json`.

Never a network lookup: a model the table does not list costs `None`, shown as "n/a".
Usage follows the OpenAI convention every backend normalises to: `input_tokens` includes
cached input, `output_tokens` includes reasoning.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from massgen.backends.models import family_of
from massgen.core.types import Usage

_PER = 1_000_000
Pricer = Callable[[Usage], float]
# Dated or "latest" snapshots cost what their base model costs: gpt-4o-2024-08-06,
# claude-sonnet-4-5-20250929, claude-3-5-haiku-latest, grok-4-0709, gemini-2.0-flash-001.
_SNAPSHOT = re.compile(r"[-@](\d{4}-\d{2}-\d{2}|\d{8}|\d{2}-\d{2}|\d{3,4}|latest)$")


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per 1M tokens."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, usage: Usage) -> float:
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        dollars = (
            (usage.input_tokens - cached) * self.input
            + cached * cached_rate
            + usage.output_tokens * self.output
        )
        return dollars / _PER


@functools.cache
def _table() -> tuple[dict[str, dict[str, Price]], dict[str, str]]:
    raw = json.loads(resources.files("massgen.backends").joinpath("prices.json").read_text())
    providers = {
        provider: {model.lower(): _price(row) for model, row in rows.items()}
        for provider, rows in raw["providers"].items()
    }
    return providers, dict(raw.get("aliases") or {})


def _price(row: list[Any]) -> Price:
    return Price(float(row[0]), float(row[1]), None if row[2] is None else float(row[2]))


def price_for(provider: str, model: str) -> Price | None:
    """The list price of `model` on `provider` (a backend type), or None if not listed.

    Looks in the provider's own table, then, for first-party families served elsewhere
    (OpenRouter's `openai/gpt-5`, `gpt-4o` on a generic endpoint), in the vendor's table.
    """
    providers, aliases = _table()
    name = model.strip().lower()
    found = _lookup(providers.get(aliases.get(provider, provider), {}), name)
    if found is not None:
        return found
    vendor = family_of(name)
    if vendor is None:
        return None
    bare = name.rsplit("/", 1)[-1]
    table = providers.get(vendor, {})
    # OpenRouter writes Anthropic versions with dots (claude-sonnet-4.5).
    return _lookup(table, bare) or _lookup(table, bare.replace(".", "-"))


def _lookup(table: dict[str, Price], name: str) -> Price | None:
    if name in table:
        return table[name]
    base = _SNAPSHOT.sub("", name)
    return table.get(base)


def pricer(provider: str, model: str) -> Pricer | None:
    """A function from usage to dollars for this model, or None when it has no price."""
    price = price_for(provider, model)
    return price.cost if price is not None else None


def format_cost(dollars: float | None) -> str:
    """ "$0.0123" (four significant decimals for small sums), or "n/a" without a price."""
    if dollars is None:
        return "n/a"
    if dollars >= 1:
        return f"${dollars:,.2f}"
    return f"${dollars:.4f}"
