"""The Python API: `run()` for a result, `stream()` for the events as they happen.

    result = massgen.run("question", config="team.yaml")
    async for event in massgen.stream("question", config="@examples/three_agents"): ...

The CLI is built on the same `TeamRun`, so both behave alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.config import loader
from massgen.config.schema import MassgenConfig
from massgen.coordination.agent import Member
from massgen.coordination.orchestrator import Orchestrator, TeamOutcome
from massgen.coordination.prompts import Turn
from massgen.core import events as ev
from massgen.core.outcome import outcome_fields
from massgen.core.toolbox import Toolbox
from massgen.core.types import Attachment
from massgen.core.usage import UsageLedger
from massgen.runs import equipment, replaying
from massgen.runs.loading import ConfigLike, LoadedConfig, load
from massgen.runs.members import build as build_members
from massgen.runs.result import RoundUsage, RunResult, VoteRecord
from massgen.runs.setting import Setting
from massgen.verifiers.team import for_config as verifier_for
from massgen.workspace.context import ContextChanges, save_changes
from massgen.workspace.team import Workspaces, run_name

if TYPE_CHECKING:
    from massgen.coordination.resume import Resumed
    from massgen.permissions.approval import Approver

__all__ = ["ConfigLike", "LoadedConfig", "RunResult", "TeamRun", "arun", "load", "run", "stream"]

Sink = Callable[[ev.AnyEvent], None]


class TeamRun:
    """One turn of a team on one question, with its log directory.

    After an interruption, `outcome` still holds what was decided before it.

    Keyword arguments beyond those whose names say it (`sinks`, `logs`, `log_dir`,
    `deadline_seconds`, `history`, `cli_args`):

    `toolboxes`: tools opened by the caller for longer than this run (a chat
    session); without them the run opens its own and closes them when it ends.
    `tool_failures`: the servers that did not start when the caller opened them; like
    the run's own, they follow `RunStarted` in the event stream.
    `previous_workspace`: in a chat, the previous turn's final workspace, which agents
    with a workspace read under `previous/` (read-only). After the run,
    `final_workspace` is where this run's final workspace lies (None without one).
    `approver`: who answers the permission engine's asks (the live view's prompt);
    without one, the config's headless policy answers.
    `resumed`: what the interrupted attempts of the run in `log_dir` decided
    (`massgen.runs.resuming.prepare`); the run continues from there, journalling into the
    same directory as a new attempt.
    `session_grants`: the approvals given "for this session", kept by the caller so
    they outlast this run (a chat's turns share one set); this run adds to it.
    `workspaces`: the run's workspaces, made by the caller (a subagent's lie inside
    its parent agent's workspace); without them, under `.massgen/` as usual.
    `attachments`: media that came with the question (an image in a `massgen serve`
    request), on every agent's task message, after its own `upload_files`.
    `replay`: a recorded run's log directory; requests it has are answered from its
    `responses.jsonl` (`replaying.py`), the others go to the model.
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
        tool_failures: Sequence[ev.ToolSourceFailed | ev.AgentWarning] = (),
        previous_workspace: Path | None = None,
        approver: Approver | None = None,
        resumed: Resumed | None = None,
        session_grants: set[str] | None = None,
        workspaces: Workspaces | None = None,
        attachments: Sequence[Attachment] = (),
        replay: Path | None = None,
    ) -> None:
        """See the class docstring for what each keyword argument means."""
        self.loaded, self.question, self.history = loaded, question, tuple(history)
        self.ledger = UsageLedger()
        self.sinks: list[Sink] = [self.ledger, *sinks]
        self.logs = logs and loaded.config.ui.logging_enabled
        self.log_dir, self.cli_args = log_dir, cli_args
        self.deadline = (
            deadline_seconds or loaded.config.timeout_settings.orchestrator_timeout_seconds
        )
        self.toolboxes, self.tool_failures = toolboxes, list(tool_failures)
        self.workspaces, self.previous_workspace = workspaces, previous_workspace
        self.approver, self.session_grants = approver, session_grants
        self.resumed, self.replay = resumed, replay
        self.attachments = tuple(attachments)
        self._not_started()

    def _not_started(self) -> None:
        """What the run makes as it executes, empty until then."""
        self.recorder: Any = None
        self.orchestrator: Orchestrator | None = None
        self.equipment: equipment.Equipment | None = None  # once equipped
        self.tape: Any = None  # the run's journal of responses, once it executes
        self.final_workspace: Path | None = None
        self.context_changes = ContextChanges()
        # Events emitted before `RunStarted`, sent right after it (None once it was sent).
        self._held: list[ev.AnyEvent] | None = []

    def open_log(self) -> Path | None:
        """Create the log directory now (the CLI prints it before the run starts). One
        that cannot be created (unwritable, disk full) is a warning: the run goes on
        without a log, and returns None."""
        if self.logs and self.recorder is None:
            from massgen.record.recorder import Recorder, new_log_dir
            from massgen.runs.resuming import write_record

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
        members = self._prepare()
        try:
            async with contextlib.AsyncExitStack() as stack:
                outcome = await self._coordinate(members, stack)
        finally:
            await _close_all(members)
            self.tape.close()
            self._save_final_workspace()
            self._list_context_changes()
            if self.recorder is not None:
                with contextlib.suppress(OSError):
                    self.recorder.close(interrupted=self.outcome is None)
        return self.result(outcome)

    def _prepare(self) -> list[Member]:
        """The members, the log, the replay tape and the workspaces, before equipping."""
        loaded = self.loaded
        record = replaying.read(self.replay)  # a missing record fails before the log opens
        members = build_members(
            loaded.config, source=loaded.source, single=loaded.single, env=loaded.env
        )
        _warn_unpriced(loaded.config, members)
        if self.attachments:
            members = [replace(m, attachments=(*m.attachments, *self.attachments)) for m in members]
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
        return members

    async def _coordinate(
        self, members: list[Member], stack: contextlib.AsyncExitStack
    ) -> TeamOutcome:
        """Equip the members (what they open closes with `stack`) and run the protocol."""
        setting = self.setting()
        self.equipment = equipped = await equipment.equip(setting, members, stack)
        self.sinks.extend(equipped.sinks)
        made = (equipped.broadcasts,) if equipped.broadcasts is not None else ()
        aids = equipment.aids_for(setting, *made)
        self.orchestrator = Orchestrator(
            list(equipped.members),
            replaying.seeded(self.loaded.config.orchestrator, self.tape),
            deadline_seconds=self.deadline,
            emit=self._emit,
            workspaces=aids.snapshots(self.workspaces) if aids else self.workspaces,
            memories=equipment.memories_for(setting),
            aids=aids,
            verifier=verifier_for(self.loaded.config.verifier, self.loaded.source, self.workspaces),
        )
        return await self.orchestrator.run(self.question, self.history, self.resumed)

    def stop_agent(self, agent: str) -> str | None:
        """Stop one agent, the team going on without it (`Orchestrator.stop`): None when
        it was stopped, else why not."""
        if self.orchestrator is None:
            return "the team has not started yet"
        return self.orchestrator.stop(agent)

    def setting(self) -> Setting:
        """What equipping and this run's children read from it (`runs/setting.py`)."""
        return Setting(
            loaded=self.loaded,
            log_dir=self.log_dir,
            workspaces=self.workspaces,
            previous_workspace=self.previous_workspace,
            toolboxes=self.toolboxes,
            approver=self.approver,
            session_grants=self.session_grants,
            resumed=self.resumed is not None,
            emit=self._emit,
            counted=self._emit_counted,
            tool_failed=self.tool_failures.append,
            spent=self.ledger.total,
            start_child=TeamRun,
        )

    def _emit_counted(self, event: ev.AnyEvent) -> None:
        """Through the orchestrator once it exists (its ledger counts usage), else the
        sinks."""
        if self.orchestrator is not None:
            self.orchestrator.emit(event)
        else:
            self._emit(event)

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
            for failed in self.tool_failures:  # stamped now: they belong to this run
                self._emit(replace(failed, at=time.time()))
            for early in held:
                self._emit(early)

    @property
    def outcome(self) -> TeamOutcome | None:
        return self.orchestrator.outcome if self.orchestrator else None

    def result(self, outcome: TeamOutcome) -> RunResult:
        return RunResult(
            **outcome_fields(outcome),
            votes=tuple(
                VoteRecord(v.voter, v.target, v.target_label, v.reason) for v in outcome.votes
            ),
            tally=dict(outcome.tally),
            # The ledger's: it also counts children cancelled as the run closed.
            usage={agent: self.ledger.of(agent).usage for agent in outcome.usage},
            log_dir=self.log_dir,
            tie_break=outcome.tie_break,
            cost_usd={agent: self.ledger.of(agent).cost_usd for agent in outcome.usage},
            rounds=tuple(
                RoundUsage(r.agent, r.run, r.phase, r.spend.usage, r.spend.cost_usd, r.attempt)
                for r in self.ledger.rounds
            ),
            context_changes=self.context_changes,
            attempts=outcome.attempts,
            restarts=outcome.restarts,
            agreement=outcome.agreement,
            replayed_calls=self.tape.replayed if self.tape else 0,
            live_calls=self.tape.live if self.tape else 0,
            checks=dict(outcome.checks),
            final_check=outcome.final_check,
        )


def warm_up(config: MassgenConfig) -> None:
    """Import what `TeamRun.execute` imports as it starts: each agent's backend module
    with its SDK, and the run's wiring (a second or more on a loaded machine). A view that
    must keep drawing (the app) calls this in a thread first; `execute` does not need it."""
    from massgen.backends.profiles import PROFILES
    from massgen.runs import agent_hosts, wiring  # noqa: F401  (imported to be loaded)

    for agent in config.agents:
        profile = PROFILES.get(agent.backend.type)
        if profile is not None:
            profile.wire.load()


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
