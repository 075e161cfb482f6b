"""Evaluation criteria (`orchestrator.coordination.evaluation_criteria_generator`): what a
good answer to this task must satisfy, written once before coordination and shown to
every agent as the bar for voting instead of writing a better answer.

One call writes them (`prompt`, then `parse`): between `min_criteria` and `max_criteria`
opinionated criteria, at most one of them "primary" (where default model output is
weakest), each with the failure modes that fail it. The prompt is a shortened form of the
predecessor's; its checklist scoring of answers against them is not part of this version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from massgen.coordination.aids.generation import GenerationFailed, json_object, text_entry

MAX_CRITERION_CHARS = 1200
_CATEGORIES = {"primary": "primary", "stretch": "stretch", "could": "stretch"}


@dataclass(frozen=True, slots=True)
class Criterion:
    id: str  # E1, E2, ...
    text: str
    category: str = "standard"  # primary | standard | stretch
    anti_patterns: tuple[str, ...] = ()
    verify_by: str = ""

    def line(self) -> str:
        """As agents read it (and the event records it)."""
        head = f"{self.id} ({self.category}): {self.text}"
        if self.anti_patterns:
            head += " Fails it: " + "; ".join(self.anti_patterns) + "."
        if self.verify_by:
            head += f" Check by: {self.verify_by}"
        return head


@dataclass(frozen=True, slots=True)
class Criteria:
    items: tuple[Criterion, ...]
    aspiration: str = ""

    def lines(self) -> tuple[str, ...]:
        return tuple(c.line() for c in self.items)


def prompt(task: str, min_criteria: int, max_criteria: int) -> str:
    example = {
        "aspiration": "1-2 phrases: the quality ceiling for this task",
        "criteria": [
            {
                "text": "[Aspect]: [opinionated quality definition].",
                "category": "primary",
                "anti_patterns": ["specific failure mode", "another one"],
                "verify_by": "how to check it, when reading the output is not enough",
            }
        ],
    }
    return (
        "You are writing the evaluation criteria for a team of AI agents that will each "
        "answer the task below, then judge each other's answers against your criteria.\n\n"
        f"## Task\n{task}\n\n"
        f"## Your goal\nWrite {min_criteria}-{max_criteria} OPINIONATED criteria that define "
        "what excellent work looks like for THIS task. A criterion takes a position on what "
        "good means (not a dimension label such as 'uses vivid imagery', but 'uses imagery "
        "that surprises; stock metaphors score poorly') and names the specific ways this "
        "kind of output goes wrong.\n\n"
        "Before writing, think: what does excellent output look like for this task type? "
        "Where do AI models typically fail on it? What would a domain expert notice first? "
        "What separates adequate from remarkable?\n\n"
        "## Requirements\n"
        f"1. Between {min_criteria} and {max_criteria} criteria, each specific to THIS task "
        "and covering a distinct dimension (content, correctness as experienced, craft, ...).\n"
        '2. Exactly ONE has category "primary": the dimension where default model output is '
        'weakest. The others are "standard" (must pass) or "stretch" (nice to have).\n'
        "3. Every criterion lists 2-4 concrete `anti_patterns`.\n"
        "4. At least one criterion judges each significant part on its own (the weakest "
        "part, not the average).\n"
        "5. Criteria evaluate; they do not prescribe quantities or implementation choices.\n\n"
        "## Output\nReply with one JSON object only, in this shape:\n"
        f"{json.dumps(example, indent=2)}"
    )


def parse(text: str, min_criteria: int, max_criteria: int) -> Criteria:
    """Raises GenerationFailed when the reply holds too few or too many criteria."""
    data = json_object(text, "criteria")
    raw = data.get("criteria")
    if not isinstance(raw, list):
        raise GenerationFailed("`criteria` is not a list")
    items = [c for c in (_criterion(entry) for entry in raw) if c is not None]
    if not min_criteria <= len(items) <= max_criteria:
        raise GenerationFailed(
            f"{len(items)} usable criteria, not between {min_criteria} and {max_criteria}"
        )
    aspiration = data.get("aspiration")
    return Criteria(_numbered(items), aspiration.strip() if isinstance(aspiration, str) else "")


def _criterion(given: object) -> Criterion | None:
    found = text_entry(given, "text")
    if found is None:
        return None
    entry, text = found
    category = _CATEGORIES.get(str(entry.get("category", "")).strip().lower(), "standard")
    anti = entry.get("anti_patterns")
    patterns = (
        tuple(a.strip() for a in anti if isinstance(a, str)) if isinstance(anti, list) else ()
    )
    verify = entry.get("verify_by")
    return Criterion(
        "",
        text[:MAX_CRITERION_CHARS],
        category,
        tuple(p[:200] for p in patterns[:6] if p),
        verify.strip()[:400] if isinstance(verify, str) else "",
    )


def _numbered(items: list[Criterion]) -> tuple[Criterion, ...]:
    """E1..En, and at most one primary (the first; as the predecessor kept it)."""
    out, primary = [], False
    for n, item in enumerate(items, 1):
        category = item.category
        if category == "primary":
            category, primary = ("standard", primary) if primary else ("primary", True)
        out.append(Criterion(f"E{n}", item.text, category, item.anti_patterns, item.verify_by))
    return tuple(out)


def note(lines: tuple[str, ...], aspiration: str = "") -> str:
    """The system-prompt paragraph every agent reads."""
    head = (
        "EVALUATION CRITERIA for this task, written before the team started. A good answer "
        "satisfies every one of them: check yours against each before you publish it, and "
        "check an answer against each before you vote for it; if it fails one you can fix, "
        "write a better answer instead."
    )
    if aspiration:
        head += f" Aim for: {aspiration}"
    return head + "\n" + "\n".join(f"- {line}" for line in lines)
