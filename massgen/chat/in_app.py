"""The chat inside the terminal app: `massgen` with no question, on a terminal.

The loop, its turns, its session and its slash commands are the plain chat's (`Chat`);
here it gets the app (`ui/tui/chat.py`) as its prompt (`AppReader`: the input box, with
the same line history as the plain prompt), its views (one `TurnView` per turn on the one
app) and its transcript (`say`). Ctrl-C keeps the chat's meaning: during a turn it stops
that turn, keeping what was decided (the app cancels the chat's task, which `cancellable`
takes for Ctrl-C), a second one exits at once; at the prompt it ends the chat. Once the
app has closed, the turns it asked and the farewell are printed to the normal screen, so
they stay in the scrollback. Textual is imported only here, when the app opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import shutil
import sys
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from massgen.api import LoadedConfig
from massgen.chat import Chat
from massgen.chat.readers import HISTORY_FILE, line_history
from massgen.core.status import ExitCode
from massgen.runs import interrupts
from massgen.sessions import SavedTurn, Session
from massgen.ui.tui import AppFailed
from massgen.ui.tui.approval import AppApprover
from massgen.ui.tui.chat import HISTORY_LIMIT, ChatApp, TurnView, chat_models
from massgen.ui.tui.terminal import saved_terminal
from massgen.ui.tui.view import after_first_frame, forget, settle


class AppReader:
    """The chat's lines from the app's input box. Raises EOFError once the app is closed
    (Ctrl-D on an empty line, q or Ctrl-C at the prompt, a crash)."""

    def __init__(self, app: ChatApp, history_file: Path = HISTORY_FILE) -> None:
        self.app = app
        self.history_file = history_file
        self.history: Any = None  # a prompt_toolkit History, opened on the first read

    async def read(self, prompt: str) -> str:
        app = self.app
        if self.history is None:
            self.history = line_history(self.history_file)
            newest = islice(self.history.load_history_strings(), HISTORY_LIMIT)
            app.call_later(app.remember, list(newest)[::-1])
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        if not app.call_later(app.ask_for_line, future):
            raise EOFError  # the app has closed
        line = await future
        if line.strip():
            with contextlib.suppress(OSError):  # a full disk costs the history, not the chat
                self.history.store_string(line)
        return line


class AppChat(Chat):
    """`Chat` with the app for its views and its transcript."""

    def __init__(self, loaded: LoadedConfig, session: Session, *, app: ChatApp, **options: Any):
        self.app = app
        approver = AppApprover(app)  # one for the chat: one ask at a time, in any turn
        # The slash commands' reports are drawn as text in the app at about this width.
        width = max(60, shutil.get_terminal_size().columns - 6)
        console = Console(file=io.StringIO(), width=width, no_color=True, highlight=False)
        super().__init__(
            loaded, session, console=console, make_view=lambda: TurnView(app, approver), **options
        )
        self.asked: list[SavedTurn] = []  # printed to the normal screen at the end
        self.after: list[tuple[str, str | None]] = []  # said once the app had closed

    async def loop(self, reader: Any) -> int:
        for turn in self.session.turns():  # a continued session: its turns to open again
            self.app.call_later(self.app.add_turn, turn)
        return await super().loop(reader)

    def say(self, text: str, style: str | None = None) -> None:
        if text and not self.app.call_later(self.app.say, text, style):
            self.after.append((text, style))

    def farewell(self) -> str:
        return ""  # printed on the normal screen once the app has closed (`print_after`)

    async def ask(self, question: str) -> SavedTurn:
        self.app.question = question
        return self._shown(await super().ask(question))

    async def resume_turn(self) -> SavedTurn | None:
        cut = self.resumable()
        if cut is not None:
            self.app.question = cut.question
        saved = await super().resume_turn()
        return self._shown(saved) if saved is not None else None

    def _shown(self, saved: SavedTurn) -> SavedTurn:
        self.asked.append(saved)
        self.app.call_later(self.app.add_turn, saved)
        return saved

    def print_after(self, out: Console) -> None:
        """The turns asked in the app, what was said after it closed, the farewell."""
        for turn in self.asked:
            out.print(Text(f"› {turn.question}", style="bold"))
            out.print(Markdown(turn.answer) if turn.answer.strip() else Text("(no answer)"))
            out.print()
        for text, style in self.after:
            out.print(Text(text, style=style or ""))
        out.print(Text(Chat.farewell(self), style="dim"))


async def drive(chat: AppChat, reader: AppReader, *, warm: Any = None, **options: Any) -> None:
    """The app and the chat's loop beside it, until the chat ends (then the app closes)
    or the app closes (then the chat ends: a turn under way stops, keeping what was
    decided). `options` go to `App.run_async` (a test runs it headless).

    Raises:
        AppFailed: the app crashed (its traceback is printed as it closes).
    """
    app = chat.app
    restore = None if options.get("headless") else saved_terminal()
    if restore is not None:  # a second Ctrl-C exits at once: the terminal first
        interrupts.before_exit.append(restore)
    app_task = asyncio.create_task(app.run_async(**options))
    talk = asyncio.create_task(after_first_frame(app, chat.loop(reader), warm))
    app.cancel_turn = talk.cancel  # what `cancellable` takes for Ctrl-C
    try:
        await asyncio.wait({app_task, talk}, return_when=asyncio.FIRST_COMPLETED)
        if app_task.done() and not talk.done():
            forget(restore)  # the app has given the terminal back
            if app.hard_exit:
                interrupts.exit_now()
            app.end_input()
            talk.cancel()  # a turn stops as at Ctrl-C; the loop ends at its next read
        await asyncio.wait({talk})
    finally:
        app.cancel_turn = None
        await settle(talk)
        if not app_task.done():
            app.exit()
        await settle(app_task)
        forget(restore)
    if app.return_code:
        raise AppFailed(app.failure, stopped=False)


def run_in_app(loaded: LoadedConfig, session: Session, **options: Any) -> int:
    """The chat in the app, then its turns on the normal screen; the CLI's exit code.
    `options` are `Chat`'s (logs, deadline_seconds, cli_args)."""
    from massgen.runs.turn import warm_up

    app = ChatApp(chat_models(loaded.config))
    chat = AppChat(loaded, session, app=app, **options)
    code = 0
    try:
        asyncio.run(drive(chat, AppReader(app), warm=partial(warm_up, loaded.config)))
    except KeyboardInterrupt:  # a signal between turns, outside the app's keys
        pass
    except AppFailed as failure:
        where = f"; its turns are saved in session {chat.session.id}"
        print(f"\nmassgen: the app failed ({failure}){where}.", file=sys.stderr)
        code = ExitCode.EXECUTION
    chat.print_after(Console(highlight=False))
    return code
