"""What one orchestrated run is given and keeps: the seams it calls (workspaces, memory;
the optional aids have theirs in `aids/base.py`), the state of one run, the outcome it returns, and what the
orchestrator's parts in other modules read of it (`Orchestrated`)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from massgen.config.schema import OrchestratorConfig
from massgen.coordination import prompts
from massgen.coordination.agent import Member
from massgen.coordination.agreement import Agreement
from massgen.coordination.board import Answer, Board, Vote
from massgen.coordination.checks import Checking
from massgen.coordination.labels import Labels
from massgen.coordination.restarts import Feedback
from massgen.coordination.resume import Resumed, ResumeError, rebuild
from massgen.coordination.tool_round import ToolBounds
from massgen.core import events as ev
from massgen.core.checks import Check
from massgen.core.outcome import Outcome
from massgen.core.types import FileChanges, Usage
from massgen.core.usage import UsageLedger

if TYPE_CHECKING:  # the aids' base reads `Workspaces` from here
    from massgen.coordination.aids import Aids


class Workspaces(Protocol):
    """The agents' workspaces as coordination needs them (`massgen/workspace/team.py`):
    an answer's snapshot is recorded as it is published, and the presenter starts from
    the snapshot of the chosen answer."""

    def published(self, agent: str, label: str) -> FileChanges | None: ...

    def presenting(self, agent: str, label: str) -> Path | None: ...

    def presenting_directly(self, agent: str) -> Path | None: ...  # no answer came before

    def new_attempt(self) -> None: ...


class Memories(Protocol):
    """The memory section of an agent's system prompt (`massgen/workspace/memory.py`),
    read fresh for each run: its own memories and those of the answers `labels`."""

    def note(self, agent: str, labels: Sequence[str]) -> str | None: ...

    def presenter_note(self) -> str: ...


@dataclass(frozen=True, slots=True)
class TeamOutcome(Outcome):
    """How the coordination ended (`Outcome`), with the board and the tally behind it."""

    tally: dict[str, int]
    tie_break: str | None
    votes: tuple[Vote, ...]
    answers: tuple[Answer, ...]
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
        """`resumed`: its seed and restarts; the rest of it comes in with `restore`."""
        seed = settings.seed if settings.seed is not None else random.randrange(2**31)
        if resumed is not None:
            seed = resumed.seed
        restarts = resumed.restarts if resumed is not None else ()
        return cls._fresh(members, question, tuple(history), seed, UsageLedger(), restarts)

    def restore(self, resumed: Resumed, agents: Sequence[str]) -> None:
        """What the journal of an interrupted run left: the board, spending, failures and
        run counts of the attempts before.

        Raises:
            ResumeError: `resumed` is not this team's (`agents`).
        """
        if tuple(resumed.agents) != tuple(agents):
            raise ResumeError("the journal's agents are not this team's")
        rebuild(resumed, self.board)
        for event in resumed.spending:
            self.ledger(event)
        self.failed.update(resumed.failed)
        self.runs.update({a: n for a, n in resumed.runs.items() if a in self.runs})

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


class Orchestrated(Protocol):
    """The orchestrator (`orchestrator.py`) as the modules that hold its lifecycles read
    it: `briefing.py`, `final_answer.py`, `restart_cycle.py`. `state` and `checking` are
    the current attempt's."""

    @property
    def members(self) -> Sequence[Member]: ...

    @property
    def settings(self) -> OrchestratorConfig: ...

    @property
    def state(self) -> RunState: ...

    @property
    def workspaces(self) -> Workspaces | None: ...

    @property
    def memories(self) -> Memories | None: ...

    @property
    def aids(self) -> Aids | None: ...

    @property
    def checking(self) -> Checking | None: ...

    def emit(self, event: ev.AnyEvent) -> None: ...

    def tool_bounds(self) -> ToolBounds: ...

    def verdicts(self) -> dict[str, Check] | None:
        """The verifier's verdicts by answer label; None without a verifier."""
        ...
