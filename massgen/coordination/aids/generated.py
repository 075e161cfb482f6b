"""The aids generated before coordination (the predecessor's generators): personas
(`personas.py`), evaluation criteria (`criteria.py`) and the question rephrased for each
agent (`paraphrases.py`), each switched on in `orchestrator.coordination`.

Each is one bounded call to the first agent's model (`generation.py`), run concurrently
by `Aids.prepare`. What it gives is emitted (`PersonaAssigned`, `CriteriaGenerated`,
`QuestionParaphrased`), so the views show it and the journal keeps it; a resumed run takes
it back from there (`restore`) instead of asking again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from massgen.config.coordination import (
    CriteriaGeneratorConfig,
    PersonaGeneratorConfig,
    QuestionParaphraserConfig,
)
from massgen.coordination.agent import Emit, Member
from massgen.coordination.aids import criteria, generation, paraphrases, personas
from massgen.coordination.aids.base import Aid
from massgen.coordination.board import Answer
from massgen.core import events as ev


class Personas(Aid):
    """A persona per agent, in its system prompt until it has answered or sees a peer's
    answer (then as `after_first_answer` says)."""

    name = "personas"

    def __init__(self, config: PersonaGeneratorConfig) -> None:
        self.config = config
        self.personas: dict[str, personas.Persona] = {}  # agent id -> its persona

    def restore(self, events: Sequence[ev.AnyEvent]) -> None:
        for event in events:
            if isinstance(event, ev.PersonaAssigned):
                self.personas[event.agent] = personas.Persona(event.persona, event.summary)

    async def prepare(
        self, question: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        config = self.config
        order = [stems[m.id] for m in members]
        own = {stems[m.id]: m.system_message for m in members}
        request = personas.prompt(
            question,
            order,
            config.diversity_mode,
            guidelines=config.persona_guidelines,
            instructions=own,
        )
        bounds = generation.Bounds(config.timeout_seconds, config.max_chars)
        reply = await generation.ask(members[0], request, bounds, emit)
        found = personas.parse(reply, order)
        for member in members:
            persona = found.get(stems[member.id])
            if persona is None:
                continue
            self.personas[member.id] = persona
            emit(
                ev.PersonaAssigned(
                    agent=member.id,
                    persona=persona.text,
                    summary=persona.summary,
                    after_first_answer=config.after_first_answer,
                )
            )

    def notes(self, member: Member, answered: bool, shown: Sequence[Answer]) -> tuple[str, ...]:
        persona = self.personas.get(member.id)
        if persona is None:
            return ()
        eased = answered or any(a.agent != member.id for a in shown)
        mode = self.config.after_first_answer
        text = personas.shown(persona, eased=eased, after_first_answer=mode)
        return (text,) if text else ()


class Criteria(Aid):
    """Evaluation criteria, shown to every agent."""

    name = "criteria"

    def __init__(self, config: CriteriaGeneratorConfig) -> None:
        self.config = config
        self.criteria: tuple[str, ...] = ()
        self.aspiration = ""

    def restore(self, events: Sequence[ev.AnyEvent]) -> None:
        for event in events:
            if isinstance(event, ev.CriteriaGenerated):
                self.criteria, self.aspiration = tuple(event.criteria), event.aspiration

    async def prepare(
        self, question: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        config, member = self.config, members[0]
        request = criteria.prompt(question, config.min_criteria, config.max_criteria)
        bounds = generation.Bounds(config.timeout_seconds, config.max_chars)
        reply = await generation.ask(member, request, bounds, emit)
        found = criteria.parse(reply, config.min_criteria, config.max_criteria)
        self.criteria, self.aspiration = found.lines(), found.aspiration
        emit(
            ev.CriteriaGenerated(
                agent=member.id, criteria=self.criteria, aspiration=found.aspiration
            )
        )

    def notes(self, member: Member, answered: bool, shown: Sequence[Answer]) -> tuple[str, ...]:
        return (criteria.note(self.criteria, self.aspiration),) if self.criteria else ()


class Paraphrases(Aid):
    """The question in other words, after the original in each agent's coordination
    runs; the presenter, and every agent when the generation failed, read the original
    only."""

    name = "paraphrases"

    def __init__(self, config: QuestionParaphraserConfig) -> None:
        self.config = config
        self.paraphrases: dict[str, str] = {}  # agent id -> the question in other words

    def restore(self, events: Sequence[ev.AnyEvent]) -> None:
        for event in events:
            if isinstance(event, ev.QuestionParaphrased):
                self.paraphrases[event.agent] = event.paraphrase

    async def prepare(
        self, question: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        config = self.config
        wanted = min(config.variants, len(members))  # more would go to no one
        request = paraphrases.prompt(question, wanted, config.strategy)
        bounds = generation.Bounds(config.timeout_seconds, config.max_chars)
        reply = await generation.ask(members[0], request, bounds, emit)
        found = paraphrases.parse(reply, question, wanted)
        for agent, variant in paraphrases.assign([m.id for m in members], len(found)).items():
            self.paraphrases[agent] = found[variant]
            emit(ev.QuestionParaphrased(agent=agent, paraphrase=found[variant], variant=variant))

    def user_parts(self, member: Member) -> tuple[str, ...]:
        text = self.paraphrases.get(member.id)
        return (paraphrases.block(text),) if text else ()
