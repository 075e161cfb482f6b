"""Citations: numbered once, bounded, and listed under an answer only where it lacks them."""

from massgen.core.citations import MAX_SOURCES, Citations, with_sources
from massgen.core.types import Source

A, B = Source("https://a.org/x", "A page"), Source("https://b.org/y")


def test_sources_are_numbered_in_the_order_first_cited():
    citations = Citations()
    assert citations.marker([B, A]) == " [1][2]"
    assert citations.marker([A]) == " [2]"
    assert (
        citations.block() == "\n\nSources:\n[1] <https://b.org/y>\n[2] A page <https://a.org/x>\n"
    )


def test_no_citations_no_block_and_at_most_max_sources():
    citations = Citations()
    assert citations.block() == "" and citations.marker([]) == ""
    many = [Source(f"https://e.org/{n}") for n in range(MAX_SOURCES + 5)]
    assert citations.marker(many).count("[") == MAX_SOURCES
    assert citations.number(Source("https://late.org")) is None


def test_an_answer_lists_only_the_sources_it_does_not_name():
    text = "Paris (see https://a.org/x)."
    assert with_sources(text, [A, B, B]) == f"{text}\n\nSources:\n[1] <https://b.org/y>\n"
    assert with_sources(text, [A]) == text
    assert with_sources(text, []) == text
