"""What the team is given besides the task (the predecessor's coordination aids):
generated personas (`personas.py`), generated evaluation criteria (`criteria.py`), the
question rephrased for each agent (`paraphrases.py`) and the changedoc (`changedoc.py`),
each switched on in `orchestrator.coordination`.

`prepare` runs once, after `RunStarted` and before any agent: the generations run
concurrently, each one bounded call to the first agent's model (`generation.py`). What
they give is emitted (`PersonaAssigned`, `CriteriaGenerated`, `QuestionParaphrased`), so
the views show it and the journal keeps it; a resumed run takes it back from there
(`restore`) instead of asking again. A generation that fails is a `GeneratorFailed`
warning: the run goes on without it, and is never failed by it. `notes` and
`presenter_notes` are the paragraphs these add to a system prompt; `paraphrase` is what an
agent's user message adds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from pathlib import Path

from massgen.config.schema import CoordinationConfig
from massgen.coordination import changedoc, criteria, generation, paraphrases, personas
from massgen.coordination.agent import Emit, Member
from massgen.coordination.board import Answer
from massgen.core import events as ev
from massgen.log import logger


class Aids:
    def __init__(self, settings: CoordinationConfig) -> None:
        self.settings = settings
        self.personas: dict[str, personas.Persona] = {}  # agent id -> its persona
        self.criteria: tuple[str, ...] = ()
        self.aspiration = ""
        self.paraphrases: dict[str, str] = {}  # agent id -> the question in other words
        self._prepared = False

    @classmethod
    def of(cls, settings: CoordinationConfig) -> Aids | None:
        """None when the config switches none of them on."""
        wanted = (
            settings.persona_generator.enabled
            or settings.evaluation_criteria_generator.enabled
            or settings.question_paraphraser.enabled
            or settings.enable_changedoc
        )
        return cls(settings) if wanted else None

    # --- before coordination ----------------------------------------------------------

    def restore(self, events: Iterable[ev.AnyEvent]) -> None:
        """What the earlier attempts of this run generated (their journal). Nothing is
        asked again, not even what failed or was cut short then."""
        self._prepared = True
        for event in events:
            match event:
                case ev.PersonaAssigned(agent=agent, persona=text, summary=summary):
                    self.personas[agent] = personas.Persona(text, summary)
                case ev.CriteriaGenerated(criteria=lines, aspiration=aspiration):
                    self.criteria, self.aspiration = tuple(lines), aspiration
                case ev.QuestionParaphrased(agent=agent, paraphrase=text):
                    self.paraphrases[agent] = text
                case _:
                    pass

    async def prepare(
        self, task: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        """Generate what the config asks for, once. `stems`: agent id -> its anonymous
        stem (models never see ids). Never raises for a failed generation."""
        if self._prepared or not members:
            return
        self._prepared = True
        steps: list[tuple[str, Awaitable[None]]] = []
        if self.settings.persona_generator.enabled:
            steps.append(("personas", self._personas(task, members, stems, emit)))
        if self.settings.evaluation_criteria_generator.enabled:
            steps.append(("criteria", self._criteria(task, members[0], emit)))
        if self.settings.question_paraphraser.enabled:
            steps.append(("paraphrases", self._paraphrases(task, members, emit)))
        await asyncio.gather(*(self._step(what, work, members[0], emit) for what, work in steps))

    @staticmethod
    async def _step(what: str, work: Awaitable[None], member: Member, emit: Emit) -> None:
        try:
            await work
        except Exception as error:  # a failed aid must not fail the run
            why = str(error) or type(error).__name__
            logger.warning("{} generation failed: {}", what, why)
            emit(ev.GeneratorFailed(agent=member.id, what=what, error=why))

    async def _personas(
        self, task: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        config = self.settings.persona_generator
        order = [stems[m.id] for m in members]
        own = {stems[m.id]: m.system_message for m in members}
        request = personas.prompt(
            task,
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

    async def _criteria(self, task: str, member: Member, emit: Emit) -> None:
        config = self.settings.evaluation_criteria_generator
        request = criteria.prompt(task, config.min_criteria, config.max_criteria)
        bounds = generation.Bounds(config.timeout_seconds, config.max_chars)
        reply = await generation.ask(member, request, bounds, emit)
        found = criteria.parse(reply, config.min_criteria, config.max_criteria)
        self.criteria, self.aspiration = found.lines(), found.aspiration
        emit(
            ev.CriteriaGenerated(
                agent=member.id, criteria=self.criteria, aspiration=found.aspiration
            )
        )

    async def _paraphrases(self, task: str, members: Sequence[Member], emit: Emit) -> None:
        config = self.settings.question_paraphraser
        wanted = min(config.variants, len(members))  # more would go to no one
        request = paraphrases.prompt(task, wanted, config.strategy)
        bounds = generation.Bounds(config.timeout_seconds, config.max_chars)
        reply = await generation.ask(members[0], request, bounds, emit)
        found = paraphrases.parse(reply, task, wanted)
        for agent, variant in paraphrases.assign([m.id for m in members], len(found)).items():
            self.paraphrases[agent] = found[variant]
            emit(ev.QuestionParaphrased(agent=agent, paraphrase=found[variant], variant=variant))

    # --- what the prompts get ---------------------------------------------------------

    def notes(self, member: Member, answered: bool, shown: Sequence[Answer]) -> tuple[str, ...]:
        """The paragraphs for one run's system prompt. `answered`: the agent has published
        before; `shown`: the answers in its view."""
        out = []
        persona = self.personas.get(member.id)
        if persona is not None:
            eased = answered or any(a.agent != member.id for a in shown)
            mode = self.settings.persona_generator.after_first_answer
            text = personas.shown(persona, eased=eased, after_first_answer=mode)
            if text:
                out.append(text)
        if self.criteria:
            out.append(criteria.note(self.criteria, self.aspiration))
        if self.settings.enable_changedoc and member.workspace is not None:
            out.append(changedoc.note(bool(shown)))
        return tuple(out)

    def paraphrase(self, member: Member) -> str | None:
        """The question in other words for this agent's coordination runs, or None (the
        presenter, and every agent when the generation failed, read the original only)."""
        return self.paraphrases.get(member.id)

    def presenter_notes(self, workspace: Path | None) -> tuple[str, ...]:
        if not self.settings.enable_changedoc:
            return ()
        note = changedoc.presenter_note(workspace)
        return (note,) if note else ()

    def snapshots(self, workspaces: changedoc.Snapshots | None) -> changedoc.Publishing | None:
        """The run's workspaces as the orchestrator should call them: with the changedoc
        on, each agent's `[SELF]` stamped before its answer's snapshot."""
        if workspaces is None or not self.settings.enable_changedoc:
            return workspaces
        return changedoc.Stamped(workspaces)
