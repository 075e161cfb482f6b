"""The app in chat mode: `massgen` with no question on a terminal.

    app = ChatApp(models)
    view = TurnView(app, AppApprover(app))   # one per turn: a fresh model on the same app

The chat loop (`massgen.chat.in_app`) is the plain chat's own, with the app as its prompt
(`read_line`), its views (`TurnView`) and its transcript (`say`, `add_turn`). Between
turns the input box under the tabs takes the next question or slash command (↑/↓ recall
earlier lines); during a turn it is disabled and Ctrl-C stops that turn only, keeping what
was decided. The Chat tab (`c`) is the conversation: what the chat said (its banner, the
slash commands' reports) and every turn, its question and final answer, to open again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Input, Markdown, Static, TabbedContent, TabPane

from massgen.core import events as ev
from massgen.record.text import preview
from massgen.sessions import SavedTurn
from massgen.ui.model import ViewModel
from massgen.ui.tui.app import TeamApp
from massgen.ui.tui.approval import AppApprover
from massgen.ui.tui.view import TAIL_CHARS
from massgen.ui.tui.widgets import AgentList, follow

# Lines ↑ recalls (the history file may hold more: only its newest are read).
HISTORY_LIMIT = 500
ASK = "ask the team, or /help · ↑ ↓ earlier lines · Esc: the app's keys · Ctrl-D leaves"
WORKING = "the team is working · Ctrl-C stops this turn, keeping what was decided"
# The chat's transcript keeps its newest notes and turns (each a widget) up to this many.
TRANSCRIPT_LIMIT = 400

CHAT_CSS = """
#prompt { height: 3; margin: 0 1; }
#transcript > Static { margin-bottom: 1; }
"""


class PromptInput(Input):
    """The chat's input line: Enter sends it, ↑/↓ walk the earlier lines (the one being
    typed comes back at the end), Ctrl-D on an empty line leaves the chat."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "recall(-1)", "earlier line", show=False),
        Binding("down", "recall(1)", "later line", show=False),
        Binding("ctrl+d", "end_or_delete", "leave", show=False),
        Binding("escape", "leave_box", "keys", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(placeholder=WORKING, id="prompt", disabled=True)
        self.history: list[str] = []
        self.place = 0  # len(history): the line being typed
        self.draft = ""
        self.on_end: Callable[[], None] | None = None

    def remember(self, lines: list[str], *, first: bool = False) -> None:
        """Add `lines` (oldest first) to what ↑ recalls; `first`: before those there."""
        self.history = lines + self.history if first else self.history + lines
        del self.history[:-HISTORY_LIMIT]
        self.place = len(self.history)

    def action_recall(self, step: int) -> None:
        if not self.history:
            return
        if self.place == len(self.history):
            self.draft = self.value
        self.place = max(0, min(len(self.history), self.place + step))
        at_end = self.place == len(self.history)
        self.value = self.draft if at_end else self.history[self.place]
        self.cursor_position = len(self.value)

    def action_leave_box(self) -> None:
        """Esc: the app's keys (s t a f c, q, ?) work again; `i` comes back."""
        self.screen.query_one(AgentList).focus()

    def action_end_or_delete(self) -> None:
        if self.value:
            self.action_delete_right()
        elif self.on_end is not None:
            self.on_end()


class Transcript(VerticalScroll):
    """What the chat said and every turn (its question and answer, opened or folded)."""

    def note(self, text: str, style: str | None) -> None:
        self._add(Static(Text(text, style=style or "")))

    def turn(self, saved: SavedTurn) -> None:
        """The turn, opened; the turns before it fold (Enter or a click opens one)."""
        for fold in self.query(Collapsible):
            fold.collapsed = True
        status = f"{saved.status}" + (f" · winner {saved.winner}" if saved.winner else "")
        if saved.log_dir:
            status += f" · logs {saved.log_dir}"
        answer = saved.answer if saved.answer.strip() else "*(no answer)*"
        fold = Collapsible(
            Static(Text(f"› {saved.question}", style="bold")),
            Markdown(answer),
            Static(Text(status, style="dim")),
            title=f"turn {saved.number} · {preview(saved.question, 60)}",
            collapsed=False,
        )
        self._add(fold)

    def _add(self, widget: Static | Collapsible) -> None:
        follow(self)
        self.mount(widget)
        extra = len(self.children) - TRANSCRIPT_LIMIT
        for old in list(self.children)[: max(extra, 0)]:
            old.remove()


class ChatApp(TeamApp):
    """`TeamApp` for a whole chat: a Chat tab with the transcript and an input box.
    `cancel_turn` is what the first Ctrl-C in a turn calls (the driver sets it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *TeamApp.BINDINGS,
        Binding("c", "tab('chat')", "chat", tooltip="the conversation: every turn, to open again"),
        Binding("i", "to_input", "input", tooltip="back to the input box (Esc leaves it)"),
    ]
    MORE_KEYS = (
        ("↑ ↓ (input box)", "the lines sent before, in this chat and earlier ones"),
        ("Esc (input box)", "leave it: the keys above work again"),
        ("Ctrl-D (input box)", "on an empty line: leave the chat"),
    )
    CSS = TeamApp.CSS + CHAT_CSS
    DONE_NOTE = "  · your turn: the box below takes the next question"

    def __init__(self, models: dict[str, str] | None = None) -> None:
        super().__init__(ViewModel(), models)
        self.over = True  # no turn yet: q and Ctrl-C leave
        self.cancel_turn: Callable[[], object] | None = None
        self.waiting: asyncio.Future[str] | None = None

    def more_panes(self) -> ComposeResult:
        with TabPane("Chat", id="chat"):
            yield Transcript(id="transcript")

    def above_status(self) -> ComposeResult:
        yield PromptInput()

    def on_mount(self) -> None:
        self.main.query_one(TabbedContent).active = "chat"
        self.main.query_one(PromptInput).on_end = self.exit

    # --- what the chat calls (in the app's task: `call_later`) ---------------------------

    def say(self, text: str, style: str | None = None) -> None:
        self.main.query_one(Transcript).note(text, style)
        if self.over:
            self.main.query_one(TabbedContent).active = "chat"

    def add_turn(self, saved: SavedTurn) -> None:
        self.main.query_one(Transcript).turn(saved)

    def remember(self, lines: list[str]) -> None:
        """Earlier sessions' lines (oldest first), for ↑ to recall before this one's."""
        self.main.query_one(PromptInput).remember(lines, first=True)

    def action_to_input(self) -> None:
        prompt = self.main.query_one(PromptInput)
        if not prompt.disabled:
            prompt.focus()

    def ask_for_line(self, future: asyncio.Future[str]) -> None:
        """The chat waits for its next line: the input box takes it."""
        self.waiting = future
        prompt = self.main.query_one(PromptInput)
        prompt.disabled = False
        prompt.placeholder = ASK
        prompt.focus()

    def end_input(self) -> None:
        """No more lines: the app is closing. The chat's read ends (EOFError)."""
        waiting, self.waiting = self.waiting, None
        if waiting is not None and not waiting.done():
            waiting.set_exception(EOFError())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not isinstance(event.input, PromptInput):
            return  # an agent's question dialog answers itself
        event.stop()
        waiting, self.waiting = self.waiting, None
        if waiting is None or waiting.done():
            return
        prompt = event.input
        line = event.value
        if line.strip():
            prompt.remember([line])
        prompt.value = ""
        prompt.placeholder = WORKING
        prompt.disabled = True
        waiting.set_result(line)

    # --- turns ---------------------------------------------------------------------------

    def begin_turn(self, model: ViewModel) -> None:
        """A turn starts (from the chat's task): its events go to `model`, which the
        widgets show from their next redraw; they are cleared in the app's task."""
        self.model = model
        self.started = self.ended = None
        self.over, self.interrupts = False, 0
        self.stop_run = self.cancel_turn
        self.call_later(self.clear_turn)
        # The input box is off until the turn ends: the agent list takes the keys.
        self.call_later(lambda: self.main.query_one(AgentList).focus())

    def run_over(self) -> None:
        self.stop_run = None
        super().run_over()


class TurnView:
    """One chat turn's view: a sink into a fresh model that the chat's app shows; asks
    go to the app's dialogs through the chat's one `approver` (one ask at a time)."""

    def __init__(self, app: ChatApp, approver: AppApprover) -> None:
        self.app, self.approver = app, approver
        self.model = ViewModel(tail_chars=TAIL_CHARS)
        app.begin_turn(self.model)

    def __call__(self, event: ev.AnyEvent) -> None:
        self.model.apply(event)
        self.app.note(event)

    def close(self) -> None:
        """The turn has ended: its final answer shows and the input box takes the next."""
        self.app.run_over()


def chat_models(config: Any) -> dict[str, str]:
    """Each agent's model, for the agent list."""
    return {agent.id: agent.backend.model or "" for agent in config.agents}
