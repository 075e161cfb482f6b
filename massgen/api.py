"""The Python API: `run()` for a result, `stream()` for the events as they happen.

    result = massgen.run("question", config="team.yaml")
    async for event in massgen.stream("question", config="@examples/three_agents"): ...

The CLI is built on the same `TeamRun`, so both behave alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen import equipment, replaying, team
from massgen.config import loader
from massgen.config.schema import MassgenConfig
from massgen.coordination.orchestrator import Orchestrator, TeamOutcome
from massgen.coordination.prompts import Turn
from massgen.coordination.restarts import Feedback
from massgen.core import events as ev
from massgen.core.status import Status
from massgen.core.types import Usage
from massgen.core.usage import UsageLedger
from massgen.loading import ConfigLike, LoadedConfig, load
from massgen.tools.base import Toolbox
from massgen.workspace.context import ContextChanges, save_changes
from massgen.workspace.team import Workspaces, run_name

if TYPE_CHECKING:
    from massgen.coordination.resume import Resumed
    from massgen.permissions.approval import Approver

__all__ = ["ConfigLike", "LoadedConfig", "RunResult", "TeamRun", "arun", "load", "run", "stream"]

Sink = Callable[[ev.AnyEvent], None]


@dataclass(frozen=True, slots=True)
class VoteRecord:
    voter: str
    target: str
    target_label: str
    reason: str


@dataclass(frozen=True, slots=True)
class RoundUsage:
    """Tokens and estimated cost of one agent's run (`round` counts its runs from 1) or of
    the final presentation (`phase="presentation"`)."""

    agent: str
    round: int
    phase: str
    usage: Usage
    cost_usd: float | None
    attempt: int = 1  # the coordination it belongs to (after an orchestration restart: 2, ...)


@dataclass(frozen=True, slots=True)
class RunResult:
    answer: str
    status: Status
    reason: str
    winner: str | None
    winner_label: str | None
    votes: tuple[VoteRecord, ...]
    tally: dict[str, int]
    usage: dict[str, Usage]
    log_dir: Path | None
    failed_agents: dict[str, str] = field(default_factory=dict)
    tie_break: str | None = None
    # Estimated dollars per agent from the shipped price table; None: the model has no price.
    cost_usd: dict[str, float | None] = field(default_factory=dict)
    rounds: tuple[RoundUsage, ...] = ()
    # Files of the user's context paths this run created, modified or deleted.
    context_changes: ContextChanges = field(default_factory=ContextChanges)
    # Coordinations run (`max_orchestration_restarts`), and why each restart was asked for.
    attempts: int = 1
    restarts: tuple[Feedback, ...] = ()
    # Model calls answered from a recorded run (`replay=`) and calls made to the model.
    replayed_calls: int = 0
    live_calls: int = 0

    @property
    def total_cost_usd(self) -> float | None:
        """The sum over agents with a price; None when no agent has one."""
        known = [cost for cost in self.cost_usd.values() if cost is not None]
        return sum(known) if known else None

    @property
    def ok(self) -> bool:
        return self.status.complete

    @property
    def total_usage(self) -> Usage:
        return sum(self.usage.values(), Usage())


class TeamRun:
    """One turn of a team on one question, with its log directory.

    After an interruption, `outcome` still holds what was decided before it.
    """

    def __init__(
        self,
        loaded: LoadedConfig,
        question: str,
        *,
        sinks: Sequence[Sink] = (),
        logs: bool = True,
        log_dir: Path | None = None,
        deadline_seconds: float | None = None,
        history: Sequence[Turn] = (),
        cli_args: list[str] | None = None,
        toolboxes: Mapping[str, Toolbox] | None = None,
        tool_failures: Sequence[ev.ToolSourceFailed] = (),
        previous_workspace: Path | None = None,
        approver: Approver | None = None,
        resumed: Resumed | None = None,
        session_grants: set[str] | None = None,
        workspaces: Workspaces | None = None,
        replay: Path | None = None,
    ) -> None:
        """`toolboxes`: tools opened by the caller for longer than this run (a chat
        session); without them the run opens its own and closes them when it ends.
        `tool_failures`: the servers that did not start when the caller opened them; like
        the run's own, they follow `RunStarted` in the event stream.
        `previous_workspace`: in a chat, the previous turn's final workspace, which agents
        with a workspace read under `previous/` (read-only). After the run,
        `final_workspace` is where this run's final workspace lies (None without one).
        `approver`: who answers the permission engine's asks (the live view's prompt);
        without one, the config's headless policy answers.
        `resumed`: what the interrupted attempts of the run in `log_dir` decided
        (`massgen.resuming.prepare`); the run continues from there, journalling into the
        same directory as a new attempt.
        `session_grants`: the approvals given "for this session", kept by the caller so
        they outlast this run (a chat's turns share one set); this run adds to it.
        `workspaces`: the run's workspaces, made by the caller (a subagent's lie inside
        its parent agent's workspace); without them, under `.massgen/` as usual.
        `replay`: a recorded run's log directory; requests it has are answered from its
        `responses.jsonl` (`replaying.py`), the others go to the model."""
        self.loaded, self.question, self.history = loaded, question, tuple(history)
        self.toolboxes = toolboxes
        self.tool_failures = list(tool_failures)
        self.ledger = UsageLedger()
        self.sinks: list[Sink] = [self.ledger, *sinks]
        self.logs = logs and loaded.config.ui.logging_enabled
        self.log_dir = log_dir
        self.deadline = (
            deadline_seconds or loaded.config.timeout_settings.orchestrator_timeout_seconds
        )
        self.cli_args = cli_args
        self.recorder: Any = None
        self.orchestrator: Orchestrator | None = None
        self.workspaces: Workspaces | None = workspaces
        self.previous_workspace = previous_workspace
        self.approver = approver
        self.resumed = resumed
        self.session_grants = session_grants
        self.permissions: Any = None  # the run's permission engine, once equipped
        self.broadcasts: Any = None  # questions between agents (`coordination.broadcast`)
        self.skill_folders: tuple[Path, ...] = ()  # readable for the engine (`use_skills`)
        self.final_workspace: Path | None = None
        self.context_changes = ContextChanges()
        self.replay = replay
        self.tape: Any = None  # the run's journal of responses, once it executes
        # Events emitted before `RunStarted`, sent right after it (None once it was sent).
        self._held: list[ev.AnyEvent] | None = []

    def open_log(self) -> Path | None:
        """Create the log directory now (the CLI prints it before the run starts). One
        that cannot be created (unwritable, disk full) is a warning: the run goes on
        without a log, and returns None."""
        if self.logs and self.recorder is None:
            from massgen.record.recorder import Recorder, new_log_dir
            from massgen.resuming import write_record

            try:
                self.log_dir = self.log_dir or new_log_dir()
                self.recorder = Recorder(
                    self.log_dir,
                    question=self.question,
                    config_raw=loader.redact(self.loaded.raw) if self.loaded.raw else None,
                    config_path=self.loaded.source,
                    cli_args=self.cli_args,
                    resumed=self.resumed is not None,
                )
                if self.resumed is None:
                    write_record(self.log_dir, self.loaded, self.question, self.history)
            except OSError as error:
                _warn_unlogged(error)
                self.logs, self.log_dir, self.recorder = False, None, None
                return None
            # First of the sinks: a decision is on disk before anyone acts on it.
            self.sinks.insert(0, self._record)
        return self.log_dir

    def _record(self, event: ev.AnyEvent) -> None:
        """A log that cannot be written (full disk, ...) must not sink the run."""
        try:
            self.recorder.handle(event)
        except OSError as error:
            _warn_unlogged(error)
            self.sinks.remove(self._record)

    async def execute(self) -> RunResult:
        loaded = self.loaded
        record = replaying.read(self.replay)  # a missing record fails before the log opens
        members = team.build(
            loaded.config, source=loaded.source, single=loaded.single, env=loaded.env
        )
        _warn_unpriced(loaded.config, members)
        self.open_log()
        self.tape = replaying.open_tape(self.log_dir, record)
        self.sinks.append(self.tape)
        members = replaying.attach(members, loaded.config.agents, self.tape)
        self.workspaces = self.workspaces or Workspaces.for_config(
            loaded.config, Path.cwd() / ".massgen", run_name(self.log_dir), self.previous_workspace
        )
        if self.resumed is not None:
            for spent in self.resumed.spending:  # the cost of the run includes them
                self.ledger(spent)
            if self.workspaces is not None:
                self.workspaces.reload(self.resumed.answer_labels)
        try:
            async with contextlib.AsyncExitStack() as stack:
                members = await equipment.equip(self, members, stack)
                aids = equipment.aids_for(self)
                self.orchestrator = Orchestrator(
                    members,
                    replaying.seeded(self.loaded.config.orchestrator, self.tape),
                    deadline_seconds=self.deadline,
                    emit=self._emit,
                    workspaces=aids.snapshots(self.workspaces) if aids else self.workspaces,
                    memories=equipment.memories_for(self),
                    aids=aids,
                    broadcasts=self.broadcasts,
                )
                outcome = await self.orchestrator.run(self.question, self.history, self.resumed)
        finally:
            await _close_all(members)
            self.tape.close()
            self._save_final_workspace()
            self._list_context_changes()
            if self.recorder is not None:
                with contextlib.suppress(OSError):
                    self.recorder.close(interrupted=self.outcome is None)
        return self.result(outcome)

    def _save_final_workspace(self) -> None:
        """The final workspace beside the final answer (`final/workspace/`), also after
        an interruption, from what was decided by then."""
        if self.workspaces is None or self.outcome is None:
            return
        try:
            self.final_workspace = self.workspaces.save_final(
                self.log_dir, self.outcome.winner_label
            )
        except OSError as error:
            print(f"massgen: warning: final workspace not saved ({error})", file=sys.stderr)

    def _list_context_changes(self) -> None:
        """What the run changed in the user's context paths: on the result and in the
        log directory (`context_changes.json`), also after an interruption."""
        contexts = self.workspaces.contexts if self.workspaces else None
        if not contexts:
            return
        try:
            self.context_changes = contexts.changes()
            if self.log_dir is not None:
                save_changes(self.context_changes, self.log_dir)
        except OSError as error:
            print(f"massgen: warning: context path changes not listed ({error})", file=sys.stderr)

    def _emit(self, event: ev.AnyEvent) -> None:
        if self._held is not None and not isinstance(event, ev.RunStarted):
            self._held.append(event)  # from opening the run (the uploads' permission checks)
            return
        for sink in tuple(self.sinks):  # a sink may remove itself
            sink(event)
        if isinstance(event, ev.RunStarted):  # tools are opened before the run starts
            held, self._held = self._held or [], None
            for failed in self.tool_failures:
                self._emit(
                    ev.ToolSourceFailed(
                        agent=failed.agent, source=failed.source, error=failed.error
                    )
                )
            for early in held:
                self._emit(early)

    @property
    def outcome(self) -> TeamOutcome | None:
        return self.orchestrator.outcome if self.orchestrator else None

    def result(self, outcome: TeamOutcome) -> RunResult:
        return RunResult(
            answer=outcome.answer,
            status=outcome.status,
            reason=outcome.reason,
            winner=outcome.winner,
            winner_label=outcome.winner_label,
            votes=tuple(
                VoteRecord(v.voter, v.target, v.target_label, v.reason) for v in outcome.votes
            ),
            tally=dict(outcome.tally),
            # The ledger's: it also counts children cancelled as the run closed.
            usage={agent: self.ledger.of(agent).usage for agent in outcome.usage},
            log_dir=self.log_dir,
            failed_agents=dict(outcome.failed),
            tie_break=outcome.tie_break,
            cost_usd={agent: self.ledger.of(agent).cost_usd for agent in outcome.usage},
            rounds=tuple(
                RoundUsage(r.agent, r.run, r.phase, r.spend.usage, r.spend.cost_usd, r.attempt)
                for r in self.ledger.rounds
            ),
            context_changes=self.context_changes,
            attempts=outcome.attempts,
            restarts=outcome.restarts,
            replayed_calls=self.tape.replayed if self.tape else 0,
            live_calls=self.tape.live if self.tape else 0,
        )


def _warn_unpriced(config: MassgenConfig, members: Sequence[Any]) -> None:
    """A cost budget cannot count what an unpriced model spends: say so before the run."""
    unpriced = [member.id for member in members if member.price is None]
    if config.orchestrator.max_cost is not None and unpriced:
        print(
            f"massgen: warning: the cost budget cannot count the calls of {', '.join(unpriced)} "
            "(no known price); --max-tokens counts every call",
            file=sys.stderr,
        )


def _warn_unlogged(error: OSError) -> None:
    print(f"massgen: warning: run log not written ({error}); continuing", file=sys.stderr)


async def _close_all(members: Sequence[Any]) -> None:
    for member in members:
        with contextlib.suppress(Exception):
            await member.backend.aclose()


# --- the public functions ----------------------------------------------------------------


async def arun(
    question: str, config: ConfigLike = None, *, logs: bool = True, **quick: Any
) -> RunResult:
    """Run a team on `question` and return its result. Raises ConfigError for bad config."""
    return await TeamRun(load(config, **quick), question, logs=logs).execute()


def run(question: str, config: ConfigLike = None, *, logs: bool = True, **quick: Any) -> RunResult:
    """Blocking `arun`, for scripts: `massgen.run("question", config="team.yaml")`.

    Raises:
        RuntimeError: called inside a running event loop (a notebook, an async app):
            use `await massgen.arun(...)` there.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun(question, config, logs=logs, **quick))
    raise RuntimeError(
        "massgen.run() cannot run inside an event loop (a notebook or async code); "
        "use `await massgen.arun(...)` instead"
    )


async def stream(
    question: str, config: ConfigLike = None, *, logs: bool = True, **quick: Any
) -> AsyncIterator[ev.AnyEvent]:
    """Yield every event of a team run as it happens, ending with `RunFinished`."""
    queue: asyncio.Queue[ev.AnyEvent | None] = asyncio.Queue()
    turn = TeamRun(load(config, **quick), question, sinks=[queue.put_nowait], logs=logs)
    task = asyncio.create_task(turn.execute())
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        task.result()  # surface a failure that ended the run early
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
