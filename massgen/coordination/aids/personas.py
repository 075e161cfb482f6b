"""Personas (`orchestrator.coordination.persona_generator`): a distinct perspective per
agent, so that a team of similar models starts from different places.

One call writes them all (`prompt`, then `parse`), for the agents under their anonymous
stems (`agent1`, ...), never their ids. An agent reads its persona in its system prompt
(after the coordination rules) until it has answered or sees a peer's answer (the
predecessor looked at the second only; here an agent sees peers only after its first
answer, so the two agree but for a resumed run); after that `after_first_answer` decides: "drop" (the default: it synthesises freely), "soften" (a preference, not a
position to defend) or "keep". The prompts follow the predecessor's three diversity modes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from massgen.coordination.aids.generation import GenerationFailed, json_object, text_entry

# A persona longer than this is cut: it rides in every system prompt of its agent.
MAX_PERSONA_CHARS = 2000
# Of each agent's own system message, what the generation request shows.
MAX_INSTRUCTION_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Persona:
    text: str
    summary: str = ""


_GOALS = {
    "perspective": (
        "PERSPECTIVES",
        "Give each agent a different PERSPECTIVE or LENS through which to view the problem: "
        "what it values most (simplicity, robustness, user delight, correctness, ...), which "
        "trade-offs it makes differently, what it refuses to compromise on. A perspective is "
        "about WHAT matters and WHY, not HOW to implement. Do not prescribe technologies, "
        "file structures or methodologies.",
    ),
    "implementation": (
        "SOLUTION APPROACHES",
        "Give each agent a different INTERPRETATION of what kind of solution to build: "
        "different forms the solution could take, different experiences, scopes or mental "
        "models. Think about the category of solution, not implementation details; do not "
        "prescribe technologies, file structures or code patterns.",
    ),
    "methodology": (
        "WORKING APPROACHES",
        "Give each agent a genuinely different METHODOLOGY for tackling the work: where it "
        "starts (big picture, hardest part, simplest prototype, concrete examples), how it "
        "structures its process, what it does when stuck, how it treats risk. Tell them how "
        "to work, not what to value or what to build.",
    ),
}

SOFTENED = (
    "Your initial perspective was:\n{persona}\n\n"
    "Now that you have seen peer solutions, treat your perspective as a preference, not a "
    "position to defend. Keep full end-to-end coverage of the task, evaluate ALL approaches "
    "objectively, and synthesize the strongest ideas into the best overall answer."
)


def prompt(
    task: str,
    stems: list[str],
    mode: str,
    *,
    guidelines: str | None = None,
    instructions: Mapping[str, str | None] | None = None,
) -> str:
    """The generation request for the agents `stems`; `instructions`: stem -> the
    agent's own system message, which a persona adds to and never replaces."""
    what, goal = _GOALS[mode]
    lines = []
    for stem in stems:
        own = (instructions or {}).get(stem)
        own = own.strip()[:MAX_INSTRUCTION_CHARS] if own else ""
        lines.append(f"- {stem}: has the instruction: {own}" if own else f"- {stem}")
    extra = f"\n## Additional guidelines\n{guidelines}\n" if guidelines else ""
    example = {
        "personas": {stem: {"persona_text": "...", "summary": "2-3 words"} for stem in stems}
    }
    return (
        f"You are assigning different {what} to {len(stems)} AI agents who will work on "
        f"the same task in parallel and then refine and vote on each other's answers.\n\n"
        f"## Task\n{task}\n\n## Agents\n" + "\n".join(lines) + "\n" + extra + "\n"
        f"## Your goal\n{goal}\n\n"
        "## Requirements\n"
        "1. Keep each persona concise (3-5 sentences), addressed to the agent as `You ...`.\n"
        "2. Each agent must solve the ENTIRE task: personas differ, scope does not. Never "
        "assign a narrow role (only testing, only the frontend, ...).\n"
        "3. Each persona explicitly asks for complete, end-to-end quality.\n"
        "4. Where an agent has an instruction, add to it without changing its workflow.\n\n"
        "## Output\nReply with one JSON object only, in this shape:\n"
        f"{json.dumps(example, indent=2)}"
    )


def parse(text: str, stems: list[str]) -> dict[str, Persona]:
    """stem -> its persona. Stems the reply leaves out get none. Raises GenerationFailed
    when it gives none at all."""
    entries = json_object(text, "personas").get("personas")
    if not isinstance(entries, dict):
        raise GenerationFailed("`personas` is not an object")
    found = {}
    for stem in stems:
        entry = entries.get(stem)
        persona = _persona(entry)
        if persona is not None:
            found[stem] = persona
    if not found:
        raise GenerationFailed(f"no persona for any of {', '.join(stems)}")
    return found


def _persona(given: object) -> Persona | None:
    found = text_entry(given, "persona_text")
    if found is None:
        return None
    entry, text = found
    summary = entry.get("summary")
    if not isinstance(summary, str):
        attributes = entry.get("attributes")
        summary = attributes.get("approach_summary") if isinstance(attributes, dict) else ""
    return Persona(text[:MAX_PERSONA_CHARS], str(summary or "").strip()[:80])


def shown(persona: Persona, *, eased: bool, after_first_answer: str) -> str | None:
    """The persona paragraph for an agent's system prompt, or None. `eased`: it has
    answered or sees a peer's answer."""
    if not eased or after_first_answer == "keep":
        return f"YOUR PERSPECTIVE for this task:\n{persona.text}"
    if after_first_answer == "soften":
        return SOFTENED.format(persona=persona.text)
    return None
