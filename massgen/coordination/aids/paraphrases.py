"""Question paraphrases (`orchestrator.coordination.question_paraphraser`; the
predecessor's `orchestrator.dspy`): each agent is also given the user's question in other
words, so that a team of similar models reads the same request from different places.

One call writes them all (`prompt`, then `parse`): `variants` rephrasings in the
predecessor's four strategies. Agent i gets rephrasing i % N (`assign`). An agent's user
message shows the original first and its rephrasing after it (`block`), as the
predecessor's did: the original stays what is answered, so a rephrasing that drifts cannot
change the task. The predecessor checked each rephrasing with a second model call; here
the checks are mechanical (`_usable`): not empty, not the original, not a repeat, and of a
length close to the original's (the predecessor's 0.4-2.5 ratio).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from massgen.coordination.aids.generation import GenerationFailed, json_object
from massgen.coordination.quoting import quoted

# The predecessor's instruction for each strategy (its `_get_strategy_context`).
STRATEGIES = {
    "balanced": (
        "Naturally rephrase this question as someone else might ask it, maintaining the "
        "same meaning with moderately different phrasing"
    ),
    "diverse": (
        "Provide a significantly different phrasing that asks for exactly the same "
        "information using completely different words"
    ),
    "conservative": (
        "Slightly rephrase this question with minimal structural changes but different word choices"
    ),
    "adaptive": (
        "Intelligently rephrase based on the question type, using appropriate terminology "
        "and structure variations"
    ),
}
# A rephrasing's length against the original's, as the predecessor bounded it.
MIN_RATIO, MAX_RATIO = 0.4, 2.5
MIN_CHARS = 5


def prompt(question: str, variants: int, strategy: str) -> str:
    example = {"paraphrases": [f"rephrasing {n}" for n in range(1, variants + 1)]}
    return (
        f"You are rephrasing a user's request {variants} times, for {variants} AI agents "
        "that will each work on it; reading it in different words helps them approach it "
        "from different places.\n\n"
        f"## The request\n{question}\n\n"
        f"## How to rephrase\n{STRATEGIES[strategy]}.\n\n"
        "## Requirements\n"
        "1. Each rephrasing asks for exactly the same thing: keep every requirement, "
        "constraint, name, number and output format; add nothing, drop nothing.\n"
        "2. Do not answer the request, and do not comment on it.\n"
        "3. Each rephrasing differs from the request and from the others.\n"
        "4. Keep each about as long as the request.\n\n"
        "## Output\nReply with one JSON object only, in this shape:\n"
        f"{json.dumps(example, indent=2)}"
    )


def parse(text: str, question: str, variants: int) -> tuple[str, ...]:
    """The usable rephrasings, at most `variants`, in the reply's order. Raises
    GenerationFailed when none is usable."""
    entries = json_object(text, "paraphrases").get("paraphrases")
    if not isinstance(entries, list):
        raise GenerationFailed("`paraphrases` is not a list")
    found: list[str] = []
    seen = {_normal(question)}
    for entry in entries:
        if isinstance(entry, str) and _usable(entry.strip(), question, seen):
            found.append(entry.strip())
            seen.add(_normal(entry))
        if len(found) == variants:
            break
    if not found:
        raise GenerationFailed(
            f"none of the {len(entries)} rephrasings is usable (empty, the question itself, "
            "repeated, or far from its length)"
        )
    return tuple(found)


def _usable(text: str, question: str, seen: set[str]) -> bool:
    if len(text) < MIN_CHARS or _normal(text) in seen:
        return False
    ratio = len(text) / max(len(question.strip()), 1)
    return MIN_RATIO <= ratio <= MAX_RATIO


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def assign(agents: Sequence[str], variants: int) -> dict[str, int]:
    """agent id -> the index of its rephrasing: the i-th agent gets i % N (the
    predecessor's rule), so with fewer rephrasings than agents they go round in turn."""
    return {agent: i % variants for i, agent in enumerate(agents)} if variants > 0 else {}


def block(paraphrase: str) -> str:
    """What follows the original message in an agent's user message."""
    return (
        "<PARAPHRASED MESSAGE> (the same request in other words, given to you to approach "
        "it from; the original message above is what you answer)\n"
        f"{quoted(paraphrase)}\n<END OF PARAPHRASED MESSAGE>"
    )
