"""The app's screen: agents on the left, the selected agent's stream, tool calls, the
answers board and the final answer in tabs on the right, the status bar at the bottom.

Events never touch a widget: the sink folds them into the `ViewModel` and marks the app
changed; a timer redraws from the model at most `REFRESH_HZ` times a second (and once a
second for the clock), so a fast stream costs the app a bounded amount of drawing.

Keys: 1-9 or [ ] pick an agent (↑/↓ in the list too); s t a f pick a tab; Enter or a click
opens a card; ? lists the keys; Ctrl-C first stops the run keeping what was decided, then
exits at once; x stops the selected agent (after asking), the team going on without it;
y copies and w saves the final answer (`steering.py`); q quits once the run is over.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import rich
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static, TabbedContent, TabPane

from massgen.core import events as ev
from massgen.ui.model import (
    ViewModel,
    display_name,
    elapsed_text,
    phase_text,
    state_text,
    totals_text,
)
from massgen.ui.styles import STATE_STYLES
from massgen.ui.tui import steering
from massgen.ui.tui.approval import Dialog
from massgen.ui.tui.keys import KeysScreen, key_rows
from massgen.ui.tui.steering import StopAgent
from massgen.ui.tui.widgets import AgentList, AnswerBoard, FinalView, StreamView, ToolCards

REFRESH_HZ = 5.0
TABS = ("stream", "tools", "answers", "final")

CSS = """
#question { height: 1; padding: 0 1; background: $boost; text-style: bold; }
#body { height: 1fr; }
#agents { width: 30%; min-width: 20; max-width: 36; height: 1fr; border: round $primary-darken-2; }
#right { width: 1fr; }
#agent-title { height: 1; padding: 0 1; }
#status { height: 1; padding: 0 1; background: $boost; }
TabbedContent { height: 1fr; }
TabPane { padding: 0 1; }
Collapsible { border-top: none; padding: 0; margin: 0; }
CollapsibleTitle { padding: 0; }
Collapsible Contents { padding: 0 0 0 2; }
AnswerBoard > Static { margin-top: 1; }
Markdown { margin: 0; padding: 0; }
#outcome { margin-bottom: 1; }
"""


class TeamApp(App[None]):
    """Watches one team turn. `stop_run` is what the first Ctrl-C calls (the runner sets
    it); `hard_exit` says the second Ctrl-C asked to leave at once."""

    TITLE = "massgen"
    CSS = CSS
    MORE_KEYS: tuple[tuple[str, str], ...] = ()  # widget keys a subclass adds to `?`
    # The status bar at the end.
    DONE_NOTE = "  · done: q quits (the answer stays printed) · y copies · w saves"
    # The description is the footer's word; the tooltip is what `?` lists (`keys.py`).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "stop", priority=True,
                tooltip="stop the run, keeping what was decided; again: exit now"),
        Binding("q", "quit_app", "quit", tooltip="quit once the run is over"),
        Binding("question_mark", "keys", "keys", tooltip="this list of keys"),
        Binding("left_square_bracket", "step(-1)", "prev agent", tooltip="the previous agent"),
        Binding("right_square_bracket", "step(1)", "next agent", tooltip="the next agent"),
        Binding("s", "tab('stream')", "stream", tooltip="the agent's stream"),
        Binding("t", "tab('tools')", "tools", tooltip="the agent's tool calls, as cards"),
        Binding("a", "tab('answers')", "answers", tooltip="every answer and vote, with reasons"),
        Binding("f", "tab('final')", "final", tooltip="the outcome and the final answer"),
        Binding("x", "stop_agent", "stop agent", show=False,
                tooltip="stop the selected agent; the team goes on without it"),
        Binding("y", "copy_answer", "copy", show=False,
                tooltip="copy the final answer (through the terminal, OSC 52)"),
        Binding("w", "save_answer", "save", show=False,
                tooltip="save the final answer to a file"),
        *(Binding(str(n), f"pick({n - 1})", show=False) for n in range(1, 10)),
    ]  # fmt: skip

    def __init__(
        self,
        model: ViewModel,
        models: dict[str, str] | None = None,
        *,
        question: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.model = model
        self.models = models or {}
        self.question = question  # shown until the run's own RunStarted
        self.preparing = ""  # the status bar's phase until then ("loading the team")
        self.clock = clock
        self.started: float | None = None
        self.ended: float | None = None
        self.changed = True
        self.over = False  # the run has ended; the final answer stays until q
        self.interrupts = 0
        self.hard_exit = False
        self.stop_run: Callable[[], object] | None = None
        self.stop_agent: StopAgent | None = None  # the running turn's (`ui/choice.give_keys`)
        self.save_dir = Path.cwd()  # where `w` saves the final answer
        self.ready = asyncio.Event()  # mounted: dialogs can be shown
        self.drawn = asyncio.Event()  # the first frame is on the screen
        self.failure: BaseException | None = None  # what crashed the app, if anything

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="question")
        with Horizontal(id="body"):
            yield AgentList(id="agents")
            with Vertical(id="right"):
                yield Static(id="agent-title")
                with TabbedContent(initial="stream", id="tabs"):
                    with TabPane("Stream", id="stream"):
                        yield StreamView(id="stream-view")
                    with TabPane("Tools", id="tools"):
                        yield ToolCards(id="tool-cards")
                    with TabPane("Answers & votes", id="answers"):
                        yield AnswerBoard(id="board")
                    with TabPane("Final", id="final"):
                        yield FinalView(id="final-view")
                    yield from self.more_panes()
        yield from self.above_status()
        yield Static(id="status")
        yield Footer()

    def more_panes(self) -> ComposeResult:
        """Tabs after the final answer's (the chat's transcript, in `ChatApp`)."""
        yield from ()

    def above_status(self) -> ComposeResult:
        """Widgets between the tabs and the status bar (the chat's input, in `ChatApp`)."""
        yield from ()

    @property
    def main(self) -> Screen[Any]:
        """The screen the widgets are on (`self.screen` is a dialog while one shows)."""
        return self.screen_stack[0] if self.screen_stack else self.screen

    def on_mount(self) -> None:
        self.set_interval(1 / REFRESH_HZ, self.redraw)
        self.redraw(force=True)
        self.main.query_one(AgentList).focus()
        self.ready.set()

    def on_ready(self) -> None:
        """Textual's word that the first frame is on the screen."""
        self.drawn.set()

    def _fatal_error(self) -> None:
        """Textual's way out on an unhandled error, without the local variables its own
        traceback prints (a key or a prompt may be among them)."""
        from rich.traceback import Traceback

        self.failure = sys.exc_info()[1]
        self.bell()
        self.panic(Traceback(show_locals=False, width=None, suppress=[rich]))

    # --- what the sink calls ------------------------------------------------------------

    def note(self, event: ev.AnyEvent) -> None:
        """An event was folded into the model: draw it on the next tick."""
        self.changed = True
        if isinstance(event, ev.RunStarted):
            self.started = self.clock()
            self.preparing = ""
        elif isinstance(event, ev.RunFinished):
            self.ended = self.clock()

    def run_over(self) -> None:
        """The turn has ended: show the final answer until the user quits. Callable from
        any task: widgets are touched only in the app's own (`call_later`)."""
        self.over = True
        self.changed = True
        self.call_later(self._show_final)

    def clear_turn(self) -> None:
        """A new turn (the chat's next question) is in `model`: the last one's agents,
        streams, cards and answers go. In the app's own task only."""
        self.changed = True
        main = self.main
        main.query_one(AgentList).reset()
        main.query_one(StreamView).reset()
        main.query_one(ToolCards).reset()
        main.query_one(AnswerBoard).reset()
        main.query_one(FinalView).reset()
        self.main.query_one(TabbedContent).active = "stream"
        self.redraw(force=True)

    def _show_final(self) -> None:
        self.main.query_one(TabbedContent).active = "final"
        self.redraw(force=True)

    @property
    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.ended or self.clock()) - self.started

    @property
    def selected(self) -> str | None:
        agents = self.model.agents
        index = self.main.query_one(AgentList).highlighted
        return agents[index] if index is not None and index < len(agents) else None

    # --- drawing ------------------------------------------------------------------------

    def redraw(self, force: bool = False) -> None:
        try:
            status = self.main.query_one("#status", Static)
        except NoMatches:  # closing: the widgets are gone before the timer
            return
        status.update(self._status())
        if not (self.changed or force):
            return
        self.changed = False
        model = self.model
        question = (model.state.question or self.question).split("\n", 1)[0]
        title = f"massgen · {question}" if question else "massgen chat"
        self.main.query_one("#question", Static).update(Text(title))
        self.main.query_one(AgentList).sync(model, self.models)
        self._draw_selected()
        self.main.query_one(AnswerBoard).show(model)
        self.main.query_one(FinalView).show(model)

    def _draw_selected(self) -> None:
        agent = self.selected
        if agent is None:
            return
        key, state = state_text(self.model, agent)
        title = Text(display_name(self.model, agent), style="bold")
        title.append(f" · {state}", style=STATE_STYLES[key] or "default")
        self.main.query_one("#agent-title", Static).update(title)
        pane = self.model.pane(agent)
        active = self.main.query_one(TabbedContent).active
        if active == "stream":
            self.main.query_one(StreamView).show(agent, pane)
        elif active == "tools":
            self.main.query_one(ToolCards).show(agent, pane)

    def _status(self) -> Text:
        phase = self.preparing or phase_text(self.model)
        line = f"⏱ {elapsed_text(self.elapsed)} · {phase} · "
        line += totals_text(self.model)
        text = Text(line, no_wrap=True, overflow="ellipsis")
        if self.over:
            text.append(self.DONE_NOTE, style="bold green")
        elif self.interrupts:
            text.append("  · stopping: Ctrl-C again exits now", style="bold yellow")
        return text

    # --- keys ---------------------------------------------------------------------------

    def on_option_list_option_highlighted(self, _: OptionList.OptionHighlighted) -> None:
        self.changed = True
        self.call_later(self.redraw)

    def on_tabbed_content_tab_activated(self, _: TabbedContent.TabActivated) -> None:
        self.changed = True
        self.call_later(self.redraw)

    def action_pick(self, index: int) -> None:
        if index < len(self.model.agents):
            self.main.query_one(AgentList).highlighted = index

    def action_step(self, delta: int) -> None:
        count = len(self.model.agents)
        if count:
            current = self.main.query_one(AgentList).highlighted or 0
            self.main.query_one(AgentList).highlighted = (current + delta) % count

    def action_keys(self) -> None:
        if not isinstance(self.screen, KeysScreen):
            self.push_screen(KeysScreen(key_rows(self) + list(self.MORE_KEYS)))

    def action_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab

    def action_quit_app(self) -> None:
        if self.over:
            self.exit()
        else:
            self.notify("The team is still working: Ctrl-C stops it and keeps what was decided.")

    def action_stop_agent(self) -> None:
        agent = self.selected
        if self.over or agent is None or self.stop_agent is None:
            self.notify("No agent is working now.", severity="warning")
            return
        steering.ask_to_stop(self, agent, display_name(self.model, agent), self.stop_agent)

    def action_copy_answer(self) -> None:
        answer = self._final_answer()
        if answer is not None:
            self.copy_to_clipboard(answer)
            self.notify("Copied the final answer (if your terminal allows it: OSC 52).")

    def action_save_answer(self) -> None:
        answer = self._final_answer()
        if answer is not None:
            steering.save_answer(self, answer, self.save_dir)

    def _final_answer(self) -> str | None:
        finished = self.model.state.finished
        if finished is None or not finished.answer.strip():
            self.notify("There is no final answer yet.", severity="warning")
            return None
        return finished.answer

    def action_interrupt(self) -> None:
        """First Ctrl-C: stop the run, keeping what was decided; a second: leave now."""
        if self.over:
            self.exit()
            return
        self.interrupts += 1
        if self.interrupts > 1 or self.stop_run is None:
            self.hard_exit = True
            self.exit()
            return
        if isinstance(self.screen, Dialog):  # at a prompt Ctrl-C is its no, then the stop
            self.screen.decline()
        self.notify("Stopping: keeping what was decided. Ctrl-C again exits now.")
        self.stop_run()
        self.redraw(force=True)
