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
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from massgen.api import LoadedConfig, RunResult, TeamRun
from massgen.core import events as ev
from massgen.core.errors import ConfigError, MassgenError
from massgen.core.status import ExitCode, Status
from massgen.record.state import COORDINATION_EVENTS, RunState
from massgen.record.text import preview
from massgen.sessions import SavedTurn, Session
from massgen.tools.base import Toolbox
from massgen.tools.team import open_tools
from massgen.ui import reports
from massgen.ui.choice import approver_for

if TYPE_CHECKING:
    from rich.console import Console

    from massgen.coordination.resume import Resumed

PROMPT = "massgen › "
HISTORY_FILE = Path("~/.config/massgen/chat_history")

COMMANDS: list[tuple[tuple[str, ...], str]] = [
    (("/help", "/h"), "this list"),
    (("/quit", "/exit", "/q"), "leave (Ctrl-D or Ctrl-C at the prompt too)"),
    (("/clear", "/reset"), "forget the conversation; the next turn starts a new session"),
    (("/status",), "the session, its turns and the last result"),
    (("/cost",), "tokens and cost: last turn per agent, and the whole session"),
    (("/answers",), "every answer of the last turn, in full"),
    (("/votes",), "the last turn's votes with reasons, the tally, the winner"),
    (("/table",), "the last turn's coordination table"),
    (("/config",), "the team: agents, backends, models, settings"),
    (("/resume",), "continue the last turn, if it was interrupted, where it stopped"),
]

Sink = Callable[[ev.AnyEvent], None]


class View(Protocol):
    def __call__(self, event: ev.AnyEvent) -> None: ...
    def close(self) -> None: ...


class LineReader(Protocol):
    async def read(self, prompt: str) -> str:
        """The next line. Raises EOFError or KeyboardInterrupt when the user leaves."""
        ...


@dataclass(slots=True)
class LastTurn:
    saved: SavedTurn
    state: RunState
    events: list[ev.AnyEvent] = field(default_factory=list)  # coordination events only


class Chat:
    """The conversation: a session, the history its turns see, and the slash commands."""

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
        self._tool_failures: list[ev.ToolSourceFailed] = []
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
            if not line:
                continue
            if line.split()[0].lower() == "/resume":
                try:
                    await self.resume_turn()
                except MassgenError as error:
                    self.say(f"massgen: error: {error}", style="red")
                continue
            if line.startswith("/"):
                if not self.command(line):
                    break
                continue
            try:
                await self.ask(line)
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
        from massgen.resuming import interrupted

        turns = self.session.turns()
        last = turns[-1] if turns else None
        if last is None or last.status is not Status.INTERRUPTED or not last.log_dir:
            return None
        return last if interrupted(Path(last.log_dir)) else None

    async def resume_turn(self) -> SavedTurn | None:
        """`/resume`: the interrupted last turn continues from its journal and is saved
        over itself. Raises ConfigError when this team is not the turn's."""
        from massgen.resuming import prepare_with

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
        # A resumed turn sees the conversation before it, not itself.
        history = self.history[:-1] if resumed is not None else self.history
        run = TeamRun(
            self.loaded,
            question,
            sinks=[view, state.apply, _keep_coordination(events)],
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
        started = time.time()
        try:
            result = await _cancellable(run)
        finally:
            view.close()
        turn = _saved_turn(number, question, result, state, run.log_dir, started, time.time())
        if resumed is not None:
            saved = self.session.replace(turn, workspace=run.final_workspace)
            self.history[-1] = saved.as_history()
        else:
            saved = self.session.save(turn, workspace=run.final_workspace)
            self.history.append(saved.as_history())
        self.last = LastTurn(saved, state, events)
        if saved.status is Status.INTERRUPTED:
            kept = "kept the best answer so far" if saved.answer else "no answer yet"
            self.say(f"turn {saved.number} cancelled; {kept} (saved, marked interrupted)", "yellow")
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

    # --- slash commands ---------------------------------------------------------------

    def command(self, line: str) -> bool:
        """Run one slash command; False means the chat should end."""
        name = line.split()[0].lower()
        if name in ("/quit", "/exit", "/q"):
            return False
        handlers: dict[str, Callable[[], str]] = {
            "/help": _help_text,
            "/h": _help_text,
            "/clear": self._clear,
            "/reset": self._clear,
            "/status": self._status,
            "/cost": lambda: reports.cost_text(self._state(), self.session.turns()),
            "/answers": lambda: self._about_last(reports.answers_text),
            "/votes": lambda: self._about_last(reports.votes_text),
            "/table": self._table,
            "/config": lambda: reports.config_text(self.loaded.config, self.loaded.source),
        }
        handler = handlers.get(name)
        if handler is None:
            self.say(f"unknown command {name}; /help lists them", style="yellow")
        else:
            self.say(handler().rstrip("\n"))
        return True

    def _state(self) -> RunState | None:
        return self.last.state if self.last else None

    def _about_last(self, report: Callable[[RunState], str]) -> str:
        return report(self.last.state) if self.last else "no turn yet in this chat"

    def _table(self) -> str:
        if self.last is None:
            return "no turn yet in this chat"
        from massgen.record.table import coordination_table

        return coordination_table(self.last.events, width=self.console.size.width)

    def _clear(self) -> str:
        old = self.session
        self.session = Session.new(old.dir.parent, config=self.loaded.source)
        self.history, self.last, self._log_root = [], None, None
        self.session_grants.clear()  # a new session starts without grants
        kept = f"; session {old.id} is kept" if old.turns() else ""
        return f"conversation cleared: new session {self.session.id}{kept}"

    def _status(self) -> str:
        turns = self.session.turns()
        lines = [
            f"session {self.session.id} · {len(turns)} turn(s) saved in {self.session.dir}",
            f"in context: {len(self.history)} earlier turn(s)",
            f"team: {len(self.loaded.config.agents)} agent(s) from "
            f"{self.loaded.source or 'the command line'}",
        ]
        if turns:
            last = turns[-1]
            winner = f" · winner {last.winner} ({last.winner_label})" if last.winner else ""
            lines.append(f"last turn: {last.number} · {last.status}{winner}")
            if last.log_dir:
                lines.append(f"logs: {last.log_dir}")
        return "\n".join(lines)


def _help_text() -> str:
    width = max(len(", ".join(names)) for names, _ in COMMANDS)
    lines = [f"  {', '.join(names):<{width}}  {text}" for names, text in COMMANDS]
    return "\n".join(["anything else is a question for the team;", *lines])


def _answer_preview(turn: SavedTurn) -> str:
    text = preview(turn.answer, 50) or "(no answer)"
    return text if turn.complete else f"{text} [{turn.status}]"


def _keep_coordination(events: list[ev.AnyEvent]) -> Sink:
    def keep(event: ev.AnyEvent) -> None:
        if isinstance(event, COORDINATION_EVENTS):
            events.append(event)

    return keep


# --- running a turn so that Ctrl-C cancels just the turn ------------------------------------


async def _cancellable(run: TeamRun) -> RunResult | None:
    """Execute `run`; on Ctrl-C cancel it and return the partial result (None if nothing
    had started). Raises what the run raises otherwise."""
    task = asyncio.create_task(run.execute())
    with _sigint_cancels(task):
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                current.uncancel()  # asyncio's own Ctrl-C handling cancelled us: same thing
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
    outcome = run.outcome
    return run.result(outcome) if outcome is not None else None


@contextlib.contextmanager
def _sigint_cancels(task: asyncio.Task[Any]) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
        installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


def _saved_turn(
    number: int,
    question: str,
    result: RunResult | None,
    state: RunState,
    log_dir: Path | None,
    started: float,
    finished: float,
) -> SavedTurn:
    common: dict[str, Any] = {
        "number": number,
        "question": question,
        "usage": {agent: state.spend(agent).to_dict() for agent in state.agents},
        "log_dir": str(log_dir) if log_dir else None,
        "started": started,
        "finished": finished,
    }
    if result is None:
        return SavedTurn(
            answer="",
            status=Status.INTERRUPTED,
            reason="interrupted before the team started",
            **common,
        )
    votes = [
        {"voter": v.voter, "target": v.target, "target_label": v.target_label, "reason": v.reason}
        for v in result.votes
    ]
    return SavedTurn(
        answer=result.answer,
        status=result.status,
        reason=result.reason,
        winner=result.winner,
        winner_label=result.winner_label,
        tally=dict(result.tally),
        votes=votes,
        failed_agents=dict(result.failed_agents),
        **common,
    )


# --- reading lines ----------------------------------------------------------------------------


class PromptReader:
    """A terminal prompt with line editing and a history file (prompt_toolkit)."""

    def __init__(self, history_file: Path = HISTORY_FILE) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, History, InMemoryHistory

        path = history_file.expanduser()
        history: History
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(path))
        except OSError:  # a read-only home: still a chat, just no saved history
            history = InMemoryHistory()
        self._session: Any = PromptSession(history=history)

    async def read(self, prompt: str) -> str:
        return await self._session.prompt_async(prompt)


class StreamReader:
    """Lines from a pipe or a file (no terminal): no editing; end of input ends the chat.

    A daemon thread reads, so a blocked read never keeps the process alive at exit.
    """

    def __init__(self, stream: TextIO | None = None, echo: TextIO | None = None) -> None:
        self._stream = stream or sys.stdin
        self._echo = echo or sys.stdout
        self._queue: asyncio.Queue[str | None] | None = None

    async def read(self, prompt: str) -> str:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._start(asyncio.get_running_loop(), self._queue)
        self._echo.write(prompt)
        self._echo.flush()
        line = await self._queue.get()
        if line is None:
            self._echo.write("\n")
            raise EOFError
        self._echo.write(line + "\n")  # a transcript shows what was asked
        return line

    def _start(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        def pump() -> None:
            for line in self._stream:
                loop.call_soon_threadsafe(queue.put_nowait, line.rstrip("\r\n"))
            loop.call_soon_threadsafe(queue.put_nowait, None)

        threading.Thread(target=pump, name="massgen-stdin", daemon=True).start()


# --- the entry point the CLI calls --------------------------------------------------------------


def run_chat(
    loaded: LoadedConfig,
    *,
    live: bool,
    resume: bool = False,
    session_id: str | None = None,
    question: str | None = None,
    logs: bool = True,
    deadline_seconds: float | None = None,
    cli_args: list[str] | None = None,
) -> int:
    """The interactive loop, or with `question` one turn saved into the session.

    Returns the CLI exit code. Raises ConfigError for an unknown session.
    """
    from rich.console import Console

    if session_id:
        session = Session.open(session_id)
    elif resume:
        session = Session.latest()
    else:
        session = Session.new(config=loaded.source)
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
