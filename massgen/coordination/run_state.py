"""What one orchestrated run is given and keeps: the seams it calls (workspaces, memory;
the optional aids have theirs in `aids/base.py`), the state of one run, and the outcome
it returns."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from massgen.config.schema import OrchestratorConfig
from massgen.coordination import prompts
from massgen.coordination.agent import Member
from massgen.coordination.agreement import Agreement
from massgen.coordination.board import Answer, Board, Vote
from massgen.coordination.labels import Labels
from massgen.coordination.restarts import Feedback
from massgen.coordination.resume import Resumed
from massgen.core.checks import Check
from massgen.core.status import Status
from massgen.core.types import Usage
from massgen.core.usage import UsageLedger


class Workspaces(Protocol):
    """The agents' workspaces as coordination needs them (`massgen/workspace/team.py`):
    an answer's snapshot is recorded as it is published, and the presenter starts from
    the snapshot of the chosen answer."""

    def published(self, agent: str, label: str) -> None: ...

    def presenting(self, agent: str, label: str) -> Path | None: ...

    def presenting_directly(self, agent: str) -> Path | None: ...  # no answer came before

    def new_attempt(self) -> None: ...


class Memories(Protocol):
    """The memory section of an agent's system prompt (`massgen/workspace/memory.py`),
    read fresh for each run: its own memories and those of the answers `labels`."""

    def note(self, agent: str, labels: Sequence[str]) -> str | None: ...

    def presenter_note(self) -> str: ...


@dataclass(frozen=True, slots=True)
class TeamOutcome:
    answer: str
    status: Status
    reason: str
    winner: str | None
    winner_label: str | None
    tally: dict[str, int]
    tie_break: str | None
    votes: tuple[Vote, ...]
    answers: tuple[Answer, ...]
    failed: dict[str, str]
    usage: dict[str, Usage]
    seed: int
    labels: dict[str, str] = field(default_factory=dict)
    attempts: int = 1  # coordinations run: 1 + the restarts asked for by an evaluation
    restarts: tuple[Feedback, ...] = ()
    # How the first answers agreed, and whether that ended the run (`agreement.py`).
    agreement: Agreement | None = None
    # The verifier's verdicts by answer label, and the final presentation's (`checks.py`).
    checks: dict[str, Check] = field(default_factory=dict)
    final_check: Check | None = None


@dataclass(frozen=True, slots=True)
class RunState:
    """What one `Orchestrator.run` works on; every field is created when the run starts."""

    question: str
    history: tuple[prompts.Turn, ...]
    seed: int
    labels: Labels
    board: Board
    ledger: UsageLedger
    failed: dict[str, str]  # agent id -> why it failed
    runs: dict[str, int]  # agent id -> runs started
    restart_reason: dict[str, str]
    wake: dict[str, asyncio.Event]  # something it waits on may have changed
    fresh: dict[str, asyncio.Event]  # a peer published
    done: asyncio.Event
    restarts: tuple[Feedback, ...] = ()  # the attempts before this one, and why they ended

    @property
    def attempt(self) -> int:
        return len(self.restarts) + 1

    @classmethod
    def begin(
        cls,
        members: Sequence[Member],
        settings: OrchestratorConfig,
        question: str,
        history: Sequence[prompts.Turn],
        resumed: Resumed | None = None,
    ) -> RunState:
        seed = settings.seed if settings.seed is not None else random.randrange(2**31)
        if resumed is not None:
            seed = resumed.seed
        restarts = resumed.restarts if resumed is not None else ()
        return cls._fresh(members, question, tuple(history), seed, UsageLedger(), restarts)

    def restarted(self, members: Sequence[Member], feedback: Feedback) -> RunState:
        """The next attempt: fresh agent states; the seed and what was spent carry over."""
        restarts = (*self.restarts, feedback)
        return RunState._fresh(
            members, self.question, self.history, self.seed, self.ledger, restarts
        )

    @classmethod
    def _fresh(
        cls,
        members: Sequence[Member],
        question: str,
        history: tuple[prompts.Turn, ...],
        seed: int,
        ledger: UsageLedger,
        restarts: tuple[Feedback, ...],
    ) -> RunState:
        ids = [m.id for m in members]
        labels = Labels(ids, seed)
        return cls(
            question=question,
            history=history,
            seed=seed,
            labels=labels,
            board=Board(ids, labels),
            ledger=ledger,
            failed={},
            runs=dict.fromkeys(ids, 0),
            restart_reason={},
            wake={agent: asyncio.Event() for agent in ids},
            fresh={agent: asyncio.Event() for agent in ids},
            done=asyncio.Event(),
            restarts=restarts,
        )
