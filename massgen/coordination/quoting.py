"""Text from answers, tool results and files, as it is pasted inside a prompt block: it
cannot open or close the blocks the prompts are built from (`prompts.py`, the restart
feedback, the paraphrase)."""

from __future__ import annotations

import re

# The opening of a marker the prompts are built from (`<agent2.1>`, `<end of agent2.1>`,
# `<END OF CURRENT ANSWERS>`, `<ORIGINAL MESSAGE>`, `<SELECTED ANSWER …>`, …), any case.
_MARKER = re.compile(
    r"<(?=\s*/?\s*(?:end\s+of\b|agent\s*\d|original\s+message|current\s+answers|"
    r"other\s+answers|selected\s+answer|conversation_history|paraphrased|short-term|"
    r"long-term|previous\s+attempt|check\s+of\b))",
    re.IGNORECASE,
)
# What stands in for their `<`: reads the same to a person, opens no block for a model.
_QUOTED_BRACKET = "\u2039"  # ‹


def quoted(text: str) -> str:
    """`text` as it is pasted inside a prompt block. An answer, a tool result or a file can
    hold `<end of agent2.1>`, `<END OF CURRENT ANSWERS>` or a second `<ORIGINAL MESSAGE>`:
    their `<` becomes `‹`, so a forged label, end marker or task reads as text."""
    return _MARKER.sub(_QUOTED_BRACKET, text)
