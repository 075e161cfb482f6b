"""Reason freely, then act: the turn of a model without native tool calling.

Such a model used to write its whole answer inside a JSON string, under a grammar that
forbids raw newlines, while the single-call baselines answered freely. Holding a model's
reasoning to a format lowers its accuracy (Tam et al., 2024, "Let Me Speak Freely?"), so
the team paid for its action format before any agent read another's answer. Now the model
writes its turn as ordinary text and ends it with one decision line:

    VOTE: <label>       it endorses that answer; the text before the line is its reason
    NEW ANSWER          the text before the line is its new, complete answer

A first answer needs no line: with nothing to vote on, the text is the answer, and the
prompt is the question alone, as a single call gets it. When the line is missing (cut by
`max_tokens`, or forgotten), one short constrained call picks the action, and the text
already written stays the answer or the reason: nothing is rewritten inside JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from massgen.coordination import actions

# A vote's reason, as peers and the presenter read it: the end of the voter's reasoning.
REASON_MAX_CHARS = 300
# Decision lines are looked for among the reply's last few non-empty lines only.
_TAIL_LINES = 3

_VOTE_LINE = re.compile(r"^\W*vote\W*[:\-]?\W*(agent\d+(?:\.\d+)?)\b", re.IGNORECASE)
_NEW_ANSWER_LINE = re.compile(r"^\W*new[ _]answer\W*$", re.IGNORECASE)

_SENSITIVITY = {
    "lenient": "If one of them is correct and complete, vote for it.",
    "balanced": (
        "Name at least one weakness of the best answer before deciding; vote for it only "
        "if it is accurate, complete and could not be clearly improved."
    ),
    "strict": (
        "Vote only for an answer of reference quality: correct, complete, clear, covering "
        "the edge cases. If you can improve it, write a better answer instead."
    ),
}


def rules(sensitivity: str, *, vote_only: bool) -> str:
    """The system prompt's coordination rules for a turn with answers in view.

    They name no label: with `for example VOTE: agent2.1` here, small models wrote that
    line and nothing else (24 of 39 votes in a GSM8K batch went to agent2.1, 38 of 39
    with no reasoning), so the example, not the answers, chose the winner."""
    check = (
        "Work the problem out yourself first, step by step, then compare each CURRENT "
        "ANSWER's reasoning and result with yours."
    )
    if vote_only:
        return (
            f"You are one of several agents answering the same ORIGINAL MESSAGE. {check} "
            "End your reply with one line: `VOTE:` followed by the label written above "
            "the answer whose result is right."
        )
    return (
        "You are one of several agents answering the same ORIGINAL MESSAGE. You see the "
        "team's CURRENT ANSWERS, each under an anonymous label written above it. "
        f"{check} {_SENSITIVITY[sensitivity]} Otherwise write a complete, improved "
        "answer.\n"
        "End your reply with one line: `VOTE:` followed by the label of the answer you "
        "vote for, or `NEW ANSWER` if the text above it is your new complete answer. Do "
        "not resubmit an answer that is already there: vote for it instead."
    )


def read_decision(text: str, labels: Sequence[str], *, can_answer: bool) -> actions.Action | None:
    """The action a free-text reply states; None when it states none (ask, constrained).

    With nothing to vote on, the whole text is the answer. A label may be written as its
    stem (`agent2`) when one offered answer has it.
    """
    body = text.strip()
    if not body:
        return actions.Invalid("Your reply was empty. Write your answer.")
    if can_answer and not labels:
        return actions.NewAnswer(_without_decision(body))
    for line in _tail(body):
        if match := _VOTE_LINE.match(line):
            return actions.CastVote(_label(match.group(1), labels), vote_reason(body))
        if can_answer and _NEW_ANSWER_LINE.match(line):
            return _new_answer(body)
    return None


def _tail(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return list(reversed(lines[-_TAIL_LINES:]))


def _label(written: str, labels: Sequence[str]) -> str:
    if written in labels or "." in written:
        return written
    matching = [label for label in labels if label.split(".")[0] == written]
    return matching[0] if len(matching) == 1 else written


def _new_answer(text: str) -> actions.Action:
    answer = _without_decision(text)
    if not answer:
        return actions.Invalid("Write your complete answer above the `NEW ANSWER` line.")
    return actions.NewAnswer(answer)


def _without_decision(text: str) -> str:
    """The text without its trailing decision lines."""
    lines = text.rstrip().splitlines()
    while lines and (
        not lines[-1].strip()
        or _NEW_ANSWER_LINE.match(lines[-1].strip())
        or _VOTE_LINE.match(lines[-1].strip())
    ):
        lines.pop()
    return "\n".join(lines).strip()


def vote_reason(text: str) -> str:
    """The end of the voter's reasoning, bounded: where its conclusion is."""
    reasoning = _without_decision(text)
    if len(reasoning) <= REASON_MAX_CHARS:
        return reasoning
    return "…" + reasoning[-(REASON_MAX_CHARS - 1) :].lstrip()


# --- the constrained decision, when the text states none -------------------------------------

DECIDE = (
    "State your decision now. Vote for the CURRENT ANSWER you judged best, or publish the "
    "answer you wrote above as your new answer."
)
VOTE_NOW = "State your vote now: the label of the CURRENT ANSWER you judged best."


def decision_prompt(*, can_answer: bool) -> str:
    return DECIDE if can_answer else VOTE_NOW


def decision_schema(labels: Sequence[str], *, can_answer: bool) -> dict[str, Any]:
    """The JSON a short constrained call picks the action with: no answer, no reason
    (those are the text already written)."""
    options: list[dict[str, Any]] = []
    if can_answer:
        options.append(
            {
                "type": "object",
                "properties": {"action": {"const": actions.NEW_ANSWER}},
                "required": ["action"],
            }
        )
    if labels:
        options.append(
            {
                "type": "object",
                "properties": {
                    "action": {"const": actions.VOTE},
                    "agent_id": {"type": "string", "enum": list(labels)},
                },
                "required": ["action", "agent_id"],
            }
        )
    return options[0] if len(options) == 1 else {"anyOf": options}


def decided(reply: str, text: str) -> actions.Action:
    """The action the constrained `reply` picked, with `text` (the free-text turn) as
    the answer or the vote's reason."""
    try:
        data = json.loads(_json_object(reply))
    except json.JSONDecodeError:
        return actions.Invalid("End your reply with `VOTE: <label>` or `NEW ANSWER`.")
    if not isinstance(data, dict):
        return actions.Invalid("End your reply with `VOTE: <label>` or `NEW ANSWER`.")
    if data.get("action") == actions.VOTE:
        return actions.CastVote(str(data.get("agent_id", "")).strip(), vote_reason(text))
    if data.get("action") == actions.NEW_ANSWER:
        return _new_answer(text)
    return actions.Invalid("End your reply with `VOTE: <label>` or `NEW ANSWER`.")


def _json_object(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text
