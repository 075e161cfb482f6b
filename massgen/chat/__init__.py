"""Interactive chat: a prompt loop where each turn runs the team with the conversation so far.

    massgen                      # a new session
    massgen --continue           # the latest session, with its history (/resume continues
                                 # its last turn if that was interrupted)
    massgen --session-id ID      # a given one

Each turn is a fresh `TeamRun` whose agents read the earlier turns (questions and final
answers, see `massgen.sessions` for turns that did not finish) in <CONVERSATION_HISTORY>.
Agents with a workspace also read the previous turn's final workspace under `previous/`.
Every turn is saved to the session before the next prompt. Ctrl-C during a turn cancels
that turn only: what the team had decided is kept and saved, marked interrupted. Ctrl-C
or Ctrl-D at the prompt ends the chat.

This module is the loop and its turns; the parts it uses are its own modules:
`readers` (where lines come from), `commands` (the slash commands), `cancel` (Ctrl-C
cancels one turn) and `outcome` (what a finished turn saves and remembers).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from massgen.api import LoadedConfig, Sink, TeamRun
from massgen.chat.cancel import cancellable
from massgen.chat.commands import QUIT, RESUME, command_name, run_command
from massgen.chat.outcome import LastTurn, keep_coordination, saved_turn
from massgen.chat.readers import LineReader, PromptReader, StreamReader
from massgen.core import events as ev
from massgen.core.errors import ConfigError, MassgenError
from massgen.core.status import ExitCode, Status
from massgen.core.toolbox import Toolbox
from massgen.record.state import RunState
from massgen.record.text import preview
from massgen.runs.toolboxes import open_tools
from massgen.sessions import SavedTurn, Session
from massgen.ui.choice import approver_for, give_keys

if TYPE_CHECKING:
    from rich.console import Console

    from massgen.coordination.resume import Resumed

__all__ = ["Chat", "LineReader", "PromptReader", "StreamReader", "View", "run_chat"]

PROMPT = "massgen › "


class View(Protocol):
    def __call__(self, event: ev.AnyEvent) -> None: ...
    def close(self) -> None: ...


class Chat:
    """The conversation: a session, the history its turns see, and the loop that reads
    questions and slash commands (`massgen.chat.commands`) until the user leaves."""

    def __init__(
        self,
        loaded: LoadedConfig,
        session: Session,
        *,
        console: Console,
        make_view: Callable[[], View],
        logs: bool = True,
        deadline_seconds: float | None = None,
        cli_args: list[str] | None = None,
    ) -> None:
        self.loaded, self.session, self.console = loaded, session, console
        self.make_view = make_view
        self.logs = logs and loaded.config.ui.logging_enabled
        self.deadline = deadline_seconds
        self.cli_args = cli_args
        self.history = session.history()
        self.last: LastTurn | None = None
        self._log_root: Path | None = None
        self._toolboxes: Mapping[str, Toolbox] | None = None
        self._tool_failures: list[ev.ToolSourceFailed | ev.AgentWarning] = []
        # "Allow for this session" lasts the chat session, not one turn's engine.
        self.session_grants: set[str] = set()

    # --- the loop ---------------------------------------------------------------------

    async def loop(self, reader: LineReader) -> int:
        self.say(self.banner())
        # Tools (MCP servers) live for the whole session, not one turn.
        async with self.tools():
            await self._turns(reader)
        self.say(self.farewell())
        return 0

    @contextlib.asynccontextmanager
    async def tools(self) -> AsyncIterator[None]:
        first = self._log_dir(self.session.next_number())  # None without logs
        async with open_tools(
            self.loaded.config,
            log_dir=first.parent if first is not None else None,
            source=self.loaded.source,
            single=self.loaded.single,
            failed=self._tool_failures.append,
        ) as boxes:
            self._toolboxes = boxes
            try:
                yield
            finally:
                self._toolboxes = None

    async def _turns(self, reader: LineReader) -> None:
        while True:
            try:
                line = (await reader.read(PROMPT)).strip()
            except (EOFError, KeyboardInterrupt, asyncio.CancelledError):
                break
            if line and not await self._answer(line):
                break

    async def _answer(self, line: str) -> bool:
        """Act on one line from the prompt; False means the chat ends."""
        if not line.startswith("/"):
            await self._saying_errors(self.ask(line))
        elif command_name(line) == RESUME:
            await self._saying_errors(self.resume_turn())
        elif command_name(line) in QUIT:
            return False
        else:
            run_command(self, line)
        return True

    async def _saying_errors(self, turn: Awaitable[SavedTurn | None]) -> None:
        """Await `turn`; one that could not start is reported and the chat goes on."""
        try:
            await turn
        except MassgenError as error:  # the session is unchanged; the user may fix it
            self.say(f"massgen: error: {error}", style="red")

    def banner(self) -> str:
        agents = [agent.id for agent in self.loaded.config.agents]
        lines = [f"massgen chat · {len(agents)} agent(s): {', '.join(agents)}"]
        turns = self.session.turns()
        if turns:
            lines.append(f"resumed session {self.session.id} with {len(turns)} earlier turn(s):")
            lines += [
                f"  {t.number}. {preview(t.question, 50)} → {_answer_preview(t)}" for t in turns
            ]
        else:
            lines.append(f"session {self.session.id} (new)")
        cut = self.resumable()
        if cut is not None:
            lines.append(
                f"turn {cut.number} was interrupted: /resume continues it where it stopped"
            )
        lines.append("/help lists commands · Ctrl-C cancels a turn · Ctrl-D quits")
        return "\n".join(lines)

    def farewell(self) -> str:
        if not self.session.turns():
            return "bye"
        return f"session {self.session.id} saved · `massgen --continue` resumes it"

    def say(self, text: str, style: str | None = None) -> None:
        # A terminal wraps at word boundaries; a pipe or file gets the lines as they are.
        wrap = self.console.is_terminal
        self.console.print(text, style=style, markup=False, highlight=False, soft_wrap=not wrap)

    def start_over(self) -> None:
        """`/clear`: a new session without history, last turn or grants, logged anew."""
        self.session = Session.new(self.session.dir.parent, config=self.loaded.source)
        self.history, self.last, self._log_root = [], None, None
        self.session_grants.clear()

    # --- one turn ---------------------------------------------------------------------

    async def ask(self, question: str) -> SavedTurn:
        """Run the team on `question` with the history; save and remember the turn.

        Raises:
            MassgenError: the turn could not start (ConfigError: e.g. a missing API key);
                the session is unchanged.
        """
        number = self.session.next_number()
        return await self._turn(number, question, self._log_dir(number))

    def resumable(self) -> SavedTurn | None:
        """The session's last turn, when it was interrupted and its journal can go on."""
        from massgen.runs.resuming import interrupted

        turns = self.session.turns()
        last = turns[-1] if turns else None
        if last is None or last.status is not Status.INTERRUPTED or not last.log_dir:
            return None
        return last if interrupted(Path(last.log_dir)) else None

    async def resume_turn(self) -> SavedTurn | None:
        """`/resume`: the interrupted last turn continues from its journal and is saved
        over itself. Raises ConfigError when this team is not the turn's."""
        from massgen.runs.resuming import prepare_with

        cut = self.resumable()
        if cut is None or cut.log_dir is None:
            self.say("nothing to resume: the last turn was not interrupted", style="yellow")
            return None
        target = prepare_with(Path(cut.log_dir), self.loaded)
        self.say(f"{target.resumed.summary()} of turn {cut.number}")
        return await self._turn(cut.number, cut.question, target.log_dir, target.resumed)

    async def _turn(
        self, number: int, question: str, log_dir: Path | None, resumed: Resumed | None = None
    ) -> SavedTurn:
        state = RunState(question)
        events: list[ev.AnyEvent] = []
        view = self.make_view()
        sinks: list[Sink] = [view, state.apply, keep_coordination(events)]
        run = self._team_run(number, question, log_dir, resumed, view, sinks)
        started = time.time()
        try:
            result = await cancellable(run)
        finally:
            view.close()
        turn = saved_turn(number, question, result, state, run.log_dir, started, time.time())
        saved = self._store(turn, run.final_workspace, over_last=resumed is not None)
        self.last = LastTurn(saved, state, events)
        if saved.status is Status.INTERRUPTED:
            kept = "kept the best answer so far" if saved.answer else "no answer yet"
            self.say(f"turn {saved.number} cancelled; {kept} (saved, marked interrupted)", "yellow")
        return saved

    def _team_run(
        self,
        number: int,
        question: str,
        log_dir: Path | None,
        resumed: Resumed | None,
        view: View,
        sinks: list[Sink],
    ) -> TeamRun:
        # A resumed turn sees the conversation before it, not itself.
        history = self.history[:-1] if resumed is not None else self.history
        run = TeamRun(
            self.loaded,
            question,
            sinks=sinks,
            logs=self.logs or resumed is not None,
            log_dir=log_dir,
            deadline_seconds=self.deadline,
            history=history,
            cli_args=self.cli_args,
            toolboxes=self._toolboxes,
            tool_failures=self._tool_failures,
            previous_workspace=self.session.previous_workspace(before=number),
            approver=approver_for(view),
            resumed=resumed,
            session_grants=self.session_grants,
        )
        give_keys(view, run)  # the app's x stops one of its agents
        return run

    def _store(self, turn: SavedTurn, workspace: Path | None, *, over_last: bool) -> SavedTurn:
        """Save `turn` and put it in the history; a resumed turn replaces the last one."""
        if over_last:
            saved = self.session.replace(turn, workspace=workspace)
            self.history[-1] = saved.as_history()
        else:
            saved = self.session.save(turn, workspace=workspace)
            self.history.append(saved.as_history())
        return saved

    def _log_dir(self, number: int) -> Path | None:
        """One chat is one log_<ts> folder with a turn_<n> per turn."""
        if not self.logs:
            return None
        if self._log_root is None:
            from massgen.record.recorder import new_log_dir

            first = new_log_dir(turn=number)
            self._log_root = first.parent
            return first
        return self._log_root / f"turn_{number}"


def _answer_preview(turn: SavedTurn) -> str:
    text = preview(turn.answer, 50) or "(no answer)"
    return text if turn.complete else f"{text} [{turn.status}]"


# --- the entry point the CLI calls --------------------------------------------------------------


def run_chat(
    loaded: LoadedConfig,
    *,
    live: bool,
    app: bool = False,
    resume: bool = False,
    session_id: str | None = None,
    question: str | None = None,
    logs: bool = True,
    deadline_seconds: float | None = None,
    cli_args: list[str] | None = None,
) -> int:
    """The interactive loop, or with `question` one turn saved into the session; `app`:
    the loop in the terminal app (`in_app.py`), `live`: panels, else plain text.

    Returns the CLI exit code. Raises ConfigError for an unknown session.
    """
    from rich.console import Console

    session = _open_session(loaded, resume=resume, session_id=session_id)
    if app and question is None:
        from massgen.chat.in_app import run_in_app

        options = {"logs": logs, "deadline_seconds": deadline_seconds, "cli_args": cli_args}
        return run_in_app(loaded, session, **options)
    console = Console(highlight=False) if live else Console(no_color=True, highlight=False)
    chat = Chat(
        loaded,
        session,
        console=console,
        make_view=_view_factory(live, console),
        logs=logs,
        deadline_seconds=deadline_seconds,
        cli_args=cli_args,
    )
    if question is not None:
        return _one_turn(chat, question)
    # Line editing wherever a person types at a terminal, even with plain output.
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    reader: LineReader = PromptReader() if terminal else StreamReader()
    try:
        return asyncio.run(chat.loop(reader))
    except KeyboardInterrupt:  # Ctrl-C between turns, outside the prompt
        chat.say("\n" + chat.farewell())
        return 0


def _open_session(loaded: LoadedConfig, *, resume: bool, session_id: str | None) -> Session:
    """The session the CLI named, the latest one, or a new one. Raises ConfigError."""
    if session_id:
        return Session.open(session_id)
    if resume:
        return Session.latest()
    return Session.new(config=loaded.source)


def _one_turn(chat: Chat, question: str) -> int:
    """One saved turn. A ConfigError reaches the CLI, which exits 1 as for any run."""
    try:
        saved = asyncio.run(chat.ask(question))
    except ConfigError:
        raise
    except MassgenError as error:
        chat.say(f"massgen: error: {error}", style="red")
        return ExitCode.EXECUTION
    chat.say(chat.farewell(), style="dim")
    return saved.status.exit_code()


def _view_factory(live: bool, console: Console) -> Callable[[], View]:
    if live:
        from massgen.ui.live import LiveView

        return lambda: LiveView(console)
    from massgen.ui.plain import PlainView

    return lambda: PlainView()
