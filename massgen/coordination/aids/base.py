"""The one interface the coordination core calls for its optional aids.

An `Aid` is one optional feature that adds to what the team is given (a persona, the
criteria, the question in other words, the changedoc, questions between agents). Every
hook does nothing unless the aid overrides it; the core (`orchestrator.py`) never names
an aid, it calls the run's `Aids`, which asks each aid in turn, in a fixed order:

    restore(events)                       a resumed run: what its journal says was made
    prepare(question, members, stems)     once, before any agent starts (generations)
    begin(members, labels, board)         the run starts (its first attempt)
    notes(member, answered, shown)        paragraphs for an agent's system prompt
    user_parts(member)                    blocks after the task in its user message
    presenter_notes(workspace)            paragraphs for the presenter's system prompt
    on_answer(workspace, label)           an answer is published, before its snapshot

Tools an aid gives the members (`ask_others`) are equipped with the run (`runs/`), not
here: the core sees them as ordinary tools behind the permission engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from massgen.coordination.agent import Emit, Member
from massgen.coordination.board import Answer, Board
from massgen.coordination.labels import Labels
from massgen.coordination.run_state import Workspaces
from massgen.core import events as ev
from massgen.core.types import FileChanges
from massgen.log import logger


class Snapshots(Workspaces, Protocol):
    """The run's workspaces (`workspace/team.py`), and where an agent's workspace is."""

    @property
    def agents(self) -> tuple[str, ...]: ...

    def path(self, agent: str) -> Path: ...


class Aid:
    """One optional aid; each hook is a no-op here. `name`: what a failed `prepare` is
    reported as (`GeneratorFailed.what`)."""

    name = "aid"

    def restore(self, events: Sequence[ev.AnyEvent]) -> None:
        """What earlier attempts of this run made (their journal); nothing is asked again."""

    async def prepare(
        self, question: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        """Before any agent starts, once per run. `stems`: agent id -> anonymous stem."""

    def begin(self, members: Sequence[Member], labels: Labels, board: Board, emit: Emit) -> None:
        """The run starts: its members (with its budget), their names, the board and
        where events go."""

    def notes(self, member: Member, answered: bool, shown: Sequence[Answer]) -> tuple[str, ...]:
        """Paragraphs for one run's system prompt. `answered`: the agent has published
        before; `shown`: the answers in its view."""
        return ()

    def user_parts(self, member: Member) -> tuple[str, ...]:
        """Blocks of this agent's user message, after the task."""
        return ()

    def presenter_notes(self, workspace: Path | None) -> tuple[str, ...]:
        return ()

    def on_answer(self, workspace: Path, label: str) -> None:
        """An agent published answer `label`; its `workspace` is kept as the answer's
        snapshot right after this returns."""


class Aids:
    """The aids of one run, in a fixed order; each hook asks every aid. A failed
    `prepare` is a `GeneratorFailed` warning: the run goes on without that aid."""

    def __init__(self, aids: Sequence[Aid]) -> None:
        self.aids = tuple(aids)
        self._prepared = False

    def restore(self, events: Iterable[ev.AnyEvent]) -> None:
        """A resumed run: nothing is generated again, not even what failed then."""
        self._prepared = True
        journal = tuple(events)
        for aid in self.aids:
            aid.restore(journal)

    async def prepare(
        self, question: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        """Every aid's preparation, concurrently and once. Never raises for a failure."""
        if self._prepared or not members:
            return
        self._prepared = True
        await asyncio.gather(
            *(self._step(aid, question, members, stems, emit) for aid in self.aids)
        )

    @staticmethod
    async def _step(
        aid: Aid, question: str, members: Sequence[Member], stems: Mapping[str, str], emit: Emit
    ) -> None:
        try:
            await aid.prepare(question, members, stems, emit)
        except Exception as error:  # a failed aid must not fail the run
            why = str(error) or type(error).__name__
            logger.warning("{} generation failed: {}", aid.name, why)
            emit(ev.GeneratorFailed(agent=members[0].id, what=aid.name, error=why))

    def begin(self, members: Sequence[Member], labels: Labels, board: Board, emit: Emit) -> None:
        for aid in self.aids:
            aid.begin(members, labels, board, emit)

    def notes(self, member: Member, answered: bool, shown: Sequence[Answer]) -> tuple[str, ...]:
        return tuple(note for aid in self.aids for note in aid.notes(member, answered, shown))

    def user_parts(self, member: Member) -> tuple[str, ...]:
        return tuple(part for aid in self.aids for part in aid.user_parts(member))

    def presenter_notes(self, workspace: Path | None) -> tuple[str, ...]:
        return tuple(note for aid in self.aids for note in aid.presenter_notes(workspace))

    def snapshots(self, workspaces: Snapshots | None) -> Workspaces | None:
        """The run's workspaces as the orchestrator should call them: each answer's
        workspace goes past every aid's `on_answer` before its snapshot."""
        return None if workspaces is None else _Announced(workspaces, self.aids)


class _Announced:
    """The run's workspaces, telling the aids of each answer before its snapshot."""

    def __init__(self, workspaces: Snapshots, aids: Sequence[Aid]) -> None:
        self._workspaces = workspaces
        self._aids = aids

    def published(self, agent: str, label: str) -> FileChanges | None:
        if agent in self._workspaces.agents:
            for aid in self._aids:
                aid.on_answer(self._workspaces.path(agent), label)
        return self._workspaces.published(agent, label)

    def presenting(self, agent: str, label: str) -> Path | None:
        return self._workspaces.presenting(agent, label)

    def presenting_directly(self, agent: str) -> Path | None:
        return self._workspaces.presenting_directly(agent)

    def new_attempt(self) -> None:
        self._workspaces.new_attempt()
