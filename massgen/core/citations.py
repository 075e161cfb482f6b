"""Citations: the sources a provider-hosted search gave an answer, kept with its text.

A backend numbers the sources its provider cites (`Citations`), marks the cited text with
`[n]` where the provider says where a citation sits, and ends the text with a `Sources:`
list, so the answer the user reads carries its sources whatever view shows it. An answer
published through `new_answer` was written as a tool argument, where providers put no
citations; `with_sources` lists the run's sources under it.
"""

from __future__ import annotations

from collections.abc import Iterable

from massgen.core.types import Source

# An answer lists at most this many sources; a search may return far more.
MAX_SOURCES = 20


class Citations:
    """The sources one answer cites, numbered in the order it first cites them."""

    def __init__(self) -> None:
        self._numbers: dict[str, int] = {}
        self._sources: list[Source] = []

    def number(self, source: Source) -> int | None:
        """The source's number, given on first sight; None past `MAX_SOURCES`."""
        if source.url not in self._numbers:
            if len(self._sources) >= MAX_SOURCES or not source.url:
                return None
            self._sources.append(source)
            self._numbers[source.url] = len(self._sources)
        return self._numbers[source.url]

    def marker(self, sources: Iterable[Source]) -> str:
        """` [1][2]` for text that cites these sources ("" when none is numbered)."""
        numbers = sorted({n for s in sources if (n := self.number(s)) is not None})
        return " " + "".join(f"[{n}]" for n in numbers) if numbers else ""

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(self._sources)

    def block(self) -> str:
        """The `Sources:` list that ends the answer ("" when it cites nothing)."""
        return sources_block(self._sources)


def sources_block(sources: Iterable[Source], start: int = 1) -> str:
    lines = [f"[{n}] {_entry(s)}" for n, s in enumerate(sources, start)]
    return "\n\nSources:\n" + "\n".join(lines) + "\n" if lines else ""


def _entry(source: Source) -> str:
    return f"{source.title} <{source.url}>" if source.title else f"<{source.url}>"


def with_sources(text: str, sources: Iterable[Source]) -> str:
    """`text` followed by a `Sources:` list of those of `sources` it does not already name
    (by URL); `text` unchanged when it names them all."""
    missing: dict[str, Source] = {}
    for source in sources:
        if source.url and source.url not in text and len(missing) < MAX_SOURCES:
            missing.setdefault(source.url, source)
    return text + sources_block(missing.values()) if missing else text
