"""What an agent reads: the system prompt and the user message, built from labels only.

No real agent id ever appears here. Answers are shown in an order shuffled per viewer,
with the viewer's own answer last, to blunt position bias without hiding anything.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from massgen.coordination.board import Answer
from massgen.coordination.free_text import rules as free_text_rules
from massgen.coordination.quoting import quoted
from massgen.core.checks import Check

_SENSITIVITY = {
    "lenient": (
        "If the best CURRENT ANSWER already addresses the ORIGINAL MESSAGE well, vote for it."
    ),
    "balanced": (
        "Before voting, name to yourself at least one weakness of the best CURRENT ANSWER. "
        "Vote only if it is accurate, complete and could not be clearly improved."
    ),
    "strict": (
        "Vote only for an answer of reference quality: correct, complete, clear, and covering "
        "the edge cases. If you can improve any of these, write a better answer instead."
    ),
}


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier turn of a conversation: the user's question and the team's answer."""

    question: str
    answer: str


def system_prompt(
    identity: str | None,
    *,
    sensitivity: str,
    vote_only: bool,
    single: bool,
    free_text: bool = False,
    answers_shown: bool = True,
) -> str:
    """`free_text`: the turn is written as free text with a decision line
    (`free_text.py`); with no answers to read it gets no rules at all, as a single call."""
    parts = [identity.strip()] if identity and identity.strip() else []
    if free_text and answers_shown and not single:
        parts.append(free_text_rules(sensitivity, vote_only=vote_only))
    elif not free_text:
        parts.append(_coordination_rules(sensitivity, vote_only=vote_only, single=single))
    return "\n\n".join(parts)


def _coordination_rules(sensitivity: str, *, vote_only: bool, single: bool) -> str:
    if single:
        return (
            "Answer the ORIGINAL MESSAGE as well as you can, then publish your answer by "
            "calling `new_answer` with the full text."
        )
    if vote_only:
        return (
            "You are one of several agents answering the same ORIGINAL MESSAGE. You have "
            "used your share of new answers, so now you must vote: call `vote` with the label "
            "of the CURRENT ANSWER that best addresses the ORIGINAL MESSAGE, and a short reason."
        )
    return (
        "You are one of several agents answering the same ORIGINAL MESSAGE. You see the "
        "CURRENT ANSWERS of the team under anonymous labels such as agent2.1.\n"
        f"{_SENSITIVITY[sensitivity]} Otherwise combine the strengths of the answers, fix "
        "their mistakes, and publish a complete improved answer with `new_answer`.\n"
        "End your turn with exactly one tool call: `vote` or `new_answer`. "
        "Do not resubmit an answer that is already there: vote for it instead."
    )


def user_message(
    question: str,
    shown: Sequence[Answer],
    *,
    history: Sequence[Turn] = (),
    after_question: Sequence[str] = (),
    bare: bool = False,
    checks: Mapping[str, Check] | None = None,
) -> str:
    """The task and the current answers, in the order given (see `order_for_viewer`);
    `after_question`: blocks the aids add after the task (the task in other words,
    `aids/paraphrases.py`). `bare`, with no answers to show, no history and no such
    blocks: the question alone, as a single call
    gets it (free-text first answers). `checks`: each answer's verdict by label, shown
    after it (`coordination/checks.py`)."""
    if bare and not shown and not history and not after_question:
        return question
    parts = []
    if history:
        parts.append(_history_block(history))
    parts.append(f"<ORIGINAL MESSAGE>\n{question}\n<END OF ORIGINAL MESSAGE>")
    parts.extend(after_question)
    parts.append(_answers_block(shown, checks))
    return "\n\n".join(parts)


def order_for_viewer(answers: Sequence[Answer], own_agent: str, seed: int) -> list[Answer]:
    """Peers' answers in a viewer-specific shuffled order, the viewer's own answer last."""
    peers = sorted((a for a in answers if a.agent != own_agent), key=lambda a: a.label)
    random.Random(seed).shuffle(peers)
    own = [a for a in answers if a.agent == own_agent]
    return peers + own


def _answers_block(answers: Sequence[Answer], checks: Mapping[str, Check] | None = None) -> str:
    if not answers:
        body = "(no answers available yet)"
    else:
        body = "\n".join(
            f"<{a.label}>\n{quoted(a.content)}\n<end of {a.label}>" + _check_block(a, checks)
            for a in answers
        )
    return f"<CURRENT ANSWERS from the agents>\n{body}\n<END OF CURRENT ANSWERS>"


def _check_block(answer: Answer, checks: Mapping[str, Check] | None) -> str:
    """The answer's check, after it: the verdict and the verifier's output, quoted like
    an answer (it can print whatever the answer made it print)."""
    if checks is None:
        return ""
    check = checks.get(answer.label)
    said = check.verdict.upper() + (f" ({check.note})" if check.note else "") if check else ""
    verdict = quoted(" ".join(said.split())) if check else "UNCHECKED (no verdict yet)"
    output = quoted(check.excerpt) if check and check.excerpt else "(no output)"
    label = answer.label
    return f"\n<check of {label}: {verdict}>\n{output}\n<end of check of {label}>"


CHECKS_NOTE = (
    "CHECKS: every answer was checked automatically when it was published. After each "
    "answer you see its check: PASSED, FAILED, or UNCHECKED (the check could not be made), "
    "with the checker's output. An answer that failed its check never wins over one that "
    "passed, whatever the votes: do not vote for a failing answer; fix what its check "
    "reports in a new answer instead."
)


def history_block(history: Sequence[Turn]) -> str:
    """The earlier turns of a chat, as every prompt shows them."""
    return _history_block(history)


def _history_block(history: Sequence[Turn]) -> str:
    lines = [f"User: {turn.question}\nAssistant: {quoted(turn.answer)}" for turn in history]
    body = "\n".join(lines)
    return f"<CONVERSATION_HISTORY>\n{body}\n<END OF CONVERSATION_HISTORY>"


def presentation_messages(
    question: str,
    winner: Answer,
    answers: Sequence[Answer],
    reasons: Sequence[str],
    *,
    identity: str | None,
    synthesize: bool,
    history: Sequence[Turn] = (),
) -> tuple[str, str]:
    """(system, user) for the final presentation call."""
    task = (
        "combine the best of all answers below into one final answer, keeping concrete "
        "details from each where they are right"
        if synthesize
        else f"use the selected answer ({winner.label}) as the basis, and improve it only "
        "where another answer or the reviewers' feedback shows a clear gain"
    )
    rules = (
        "The team has finished and selected an answer. Write the final answer for the "
        f"user: {task}. Reply with the final answer only, in Markdown, without mentioning "
        "the team, the labels or the voting."
    )
    system = "\n\n".join(p for p in ((identity or "").strip(), rules) if p)
    feedback = (
        "\n".join(f"- {quoted(reason)}" for reason in reasons if reason) or "- (no reasons given)"
    )
    others = [a for a in answers if a.agent != winner.agent]
    parts = []
    if history:
        parts.append(_history_block(history))
    parts += [
        f"<ORIGINAL MESSAGE>\n{question}\n<END OF ORIGINAL MESSAGE>",
        f"<SELECTED ANSWER {winner.label}>\n{quoted(winner.content)}\n<END OF SELECTED ANSWER>",
        f"Reviewers' reasons for choosing it:\n{feedback}",
    ]
    if others:
        parts.append(_answers_block(others).replace("CURRENT ANSWERS", "OTHER ANSWERS"))
    parts.append("Write the final answer now.")
    return system, "\n\n".join(parts)


PLANNING_NOTE = (
    "PLANNING MODE: while the team coordinates, tools that can change things outside this "
    "conversation (send, write, delete, buy, ...) are not run; calling one tells you so. "
    "Read-only tools run as usual. Describe in your answer what you would do: which tools, "
    "with which arguments, in which order. The agent whose answer is chosen carries the "
    "plan out in the final presentation."
)

PRESENTING_WITH_TOOLS = (
    "Your tools now run for real. Carry out the actions the selected answer plans, check "
    "their results, then write the final answer, saying what was done."
)

PERMISSIONS_NOTE = (
    "PERMISSIONS: every tool call passes a permission check. You may read your workspace, "
    "other answers' files and the user's context paths, and write inside your workspace; "
    "paths outside them, secrets (`.env`, credentials), destructive or network commands "
    "and interpreter one-liners are refused or need approval. When a call is refused, do "
    "not try to work around it (another tool, a wrapper, a different path): say in your "
    "answer what you could not do and why."
)

WORKSPACE_NOTE = (
    "WORKSPACE: you have a working directory of your own; the file tools take paths relative "
    "to it. Each answer comes with the files of its author's workspace as they were when it "
    "was published, read-only under `peers/<label>/` (for example `peers/agent1.2/`); copy "
    "what you want to build on with `copy_from_peer`. A vote is for an answer and its files."
)
