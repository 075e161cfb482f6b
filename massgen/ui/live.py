"""The live terminal view: one panel per agent, a status line, then the result.

A sink like any other: `LiveView()(event)` for every event, `close()` at the end. It holds
no coordination logic; everything it draws is folded from events by `ui.model.ViewModel`.

Events only update the model (cheap); the screen is redrawn at most `refresh_per_second`
times, from the running event loop, so a fast stream never waits for the terminal. A
timer also redraws once a second so the elapsed time moves while agents are quiet.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from massgen.core import events as ev
from massgen.core.status import Status
from massgen.record.text import checks_text
from massgen.ui.model import (
    Pane,
    ViewModel,
    display_name,
    elapsed_text,
    phase_text,
    state_text,
    tally_text,
    totals_text,
)
from massgen.ui.styles import BORDER_STYLES, STATE_STYLES, STREAM_STYLES

REFRESH_HZ = 8.0
MIN_PANEL_WIDTH = 24  # narrower panels wrap every word; use more rows instead
MIN_PANEL_HEIGHT = 4  # borders, the state line and one line of stream


class LiveView:
    """Draws a run as it happens; prints the winner, tally and final answer at the end."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        refresh_per_second: float = REFRESH_HZ,
    ) -> None:
        self.console = console or Console()
        self.model = ViewModel()
        self._clock = clock
        self._interval = 1.0 / refresh_per_second
        self._live: Live | None = None
        self._started: float | None = None
        self._ended: float | None = None
        self._last_refresh = -math.inf
        self._pending: asyncio.TimerHandle | None = None
        self._tick: asyncio.TimerHandle | None = None
        self._paused = False
        self.frames = 0  # how many times the screen was redrawn

    # --- the sink ---------------------------------------------------------------------

    def __call__(self, event: ev.AnyEvent) -> None:
        self.model.apply(event)
        match event:
            case ev.RunStarted():
                self._started = self._clock()
                self._start()
            case ev.RunFinished():
                self._ended = self._clock()
                self.close()
                self.console.print(result_block(self.model, self.elapsed))
            case _:
                self._request_refresh()

    @property
    def elapsed(self) -> float:
        if self._started is None:
            return 0.0
        return (self._ended or self._clock()) - self._started

    def renderable(self) -> RenderableType:
        width, height = self.console.size
        # One line short of the screen: a frame as tall as the terminal scrolls it.
        return render_live(self.model, width=width, height=height - 1, elapsed=self.elapsed)

    def close(self) -> None:
        """Stop drawing and give the terminal back as it was. Idempotent."""
        self._paused = False
        self._stop_drawing()

    def pause(self) -> None:
        """Stop drawing so that a prompt owns the terminal; events still fold into the
        model. `resume()` draws again. No-op when nothing is drawn."""
        if self._live is not None:
            self._stop_drawing()
            self._paused = True

    def resume(self) -> None:
        """Draw again after `pause()`, from a fresh `Live`: the old one would erase as many
        lines as it last drew, which now hold the prompt. No-op after `close()`."""
        if self._paused:
            self._paused = False
            self._start()

    def _stop_drawing(self) -> None:
        for handle in (self._pending, self._tick):
            if handle is not None:
                handle.cancel()
        self._pending = self._tick = None
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    # --- drawing, rate-limited --------------------------------------------------------

    def _start(self) -> None:
        if self._live is not None:
            return
        self._live = Live(
            console=self.console,
            get_renderable=self.renderable,
            auto_refresh=False,  # we refresh from the event loop, never from a thread
            transient=True,  # the result block replaces the panels when the run ends
        )
        self._live.start()
        self._refresh()

    def _request_refresh(self) -> None:
        if self._live is None or self._pending is not None:
            return
        delay = self._last_refresh + self._interval - self._clock()
        if delay <= 0:
            self._refresh()
            return
        loop = _running_loop()
        if loop is not None:
            self._pending = loop.call_later(delay, self._refresh)

    def _refresh(self) -> None:
        self._pending = None
        if self._live is None:
            return
        self._last_refresh = self._clock()
        self.frames += 1
        self._live.refresh()
        loop = _running_loop()
        if loop is not None and self._tick is None:
            self._tick = loop.call_later(1.0, self._on_tick)

    def _on_tick(self) -> None:
        self._tick = None
        self._refresh()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# --- the frame ----------------------------------------------------------------------------


def render_live(model: ViewModel, *, width: int, height: int, elapsed: float) -> RenderableType:
    """The whole frame for a `width` x `height` screen: question, panels, status line."""
    question = model.state.question.split("\n", 1)[0] if model.state.question else ""
    header = Text(f"massgen · {question}", style="bold", no_wrap=True, overflow="ellipsis")
    status = Text(
        f"⏱ {elapsed_text(elapsed)} · {phase_text(model)} · {totals_text(model)}",
        style="dim",
        no_wrap=True,
        overflow="ellipsis",
    )
    return Group(header, _agents(model, width, max(1, height - 2)), status)


def _agents(model: ViewModel, width: int, height: int) -> RenderableType:
    agents = model.agents
    if not agents:
        return Text("starting…", style="dim")
    rows = math.ceil(len(agents) / max(1, width // MIN_PANEL_WIDTH))
    cols = math.ceil(len(agents) / rows)
    panel_height = height // rows
    if panel_height < MIN_PANEL_HEIGHT:
        return _compact(model, agents, height)
    grid = Table.grid(expand=True)
    for _ in range(cols):
        grid.add_column(ratio=1)
    for row in range(rows):
        cells: list[RenderableType] = [
            _panel(model, agent, panel_height) for agent in agents[row * cols : (row + 1) * cols]
        ]
        grid.add_row(*cells, *[Text("")] * (cols - len(cells)))
    return grid


def _panel(model: ViewModel, agent: str, height: int) -> Panel:
    key, text = state_text(model, agent)
    state = Text(text, style=STATE_STYLES[key], no_wrap=True, overflow="ellipsis")
    return Panel(
        Group(state, Tail(pane_text(model.pane(agent)), height - 3)),
        title=Text(display_name(model, agent), style="bold"),
        title_align="left",
        border_style=BORDER_STYLES.get(key, "dim"),
        height=height,
        padding=(0, 1),
    )


def _compact(model: ViewModel, agents: list[str], height: int) -> RenderableType:
    """One line per agent, for screens too short for panels."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, overflow="ellipsis", max_width=24)
    grid.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
    shown = agents if len(agents) <= height else agents[: height - 1]
    for agent in shown:
        key, text = state_text(model, agent)
        grid.add_row(Text(display_name(model, agent), style="bold"), Text(text, STATE_STYLES[key]))
    if len(shown) < len(agents):
        grid.add_row(Text(f"… {len(agents) - len(shown)} more", style="dim"), "")
    return grid


def pane_text(pane: Pane) -> Text:
    text = Text()
    for kind, chunk in pane.runs:
        text.append(chunk, style=STREAM_STYLES[kind])
    text.rstrip()
    return text


class Tail:
    """The last `lines` lines of `text` once wrapped to the width it is drawn at."""

    def __init__(self, text: Text, lines: int) -> None:
        self.text, self.lines = text, lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.lines <= 0 or not self.text:
            return
        text = self.text[_cut(self.text.plain, (self.lines + 1) * options.max_width) :]
        wrapped = text.wrap(console, options.max_width, overflow="fold")
        yield Text("\n").join(wrapped[-self.lines :])


def _cut(plain: str, keep: int) -> int:
    """Where to start wrapping so that the last `keep` characters are all included.

    A wrapped line holds at most `keep / lines` characters, so a long stream costs no more
    to draw than a short one. The start is a line start when one is near, else a multiple
    of `keep`: a start that moved with every chunk would re-break the lines each frame.
    """
    if len(plain) <= keep:
        return 0
    newline = plain.rfind("\n", 0, len(plain) - keep)
    if newline >= 0 and len(plain) - newline <= 4 * keep:
        return newline + 1
    return (len(plain) - 2 * keep) // keep * keep


# --- the end ------------------------------------------------------------------------------


def result_block(model: ViewModel, elapsed: float) -> RenderableType:
    """Who did what, the winner and the tally, then the final answer as Markdown."""
    state = model.state
    finished, outcome = state.finished, state.outcome
    summary = Table.grid(padding=(0, 2))
    summary.add_column(no_wrap=True, overflow="ellipsis", max_width=32)
    summary.add_column()
    for agent in model.agents:
        key, text = state_text(model, agent)
        summary.add_row(
            Text(display_name(model, agent), style="bold"), Text(text, STATE_STYLES[key])
        )
    cut_short = finished is not None and not finished.status.complete
    title = "best answer so far" if cut_short else "winner"
    winner = f"{title}: {state.winner} ({state.winner_label})" if state.winner else "no winner"
    lines = [f"votes: {tally_text(outcome.tally if outcome else {})}"]
    if outcome and outcome.tie_break:
        lines.append(f"tie-break: {outcome.tie_break}")
    if outcome and outcome.agreement:
        lines.append(f"agreement: {outcome.agreement}")
    if state.checks:
        lines.append(checks_text(state.checks, state.final_check))
    question = Text(f"massgen · {state.question}", style="bold", no_wrap=True, overflow="ellipsis")
    parts: list[RenderableType] = [question, summary]
    parts.append(Rule(winner, style="green" if state.winner else "red"))
    parts.append(Text("\n".join(lines), style="dim"))
    if finished is not None and finished.status is not Status.OK:
        parts.append(Text(f"{finished.status}: {finished.reason}", style="yellow"))
    answer = finished.answer if finished else ""
    parts.append(Text(""))
    parts.append(Markdown(answer) if answer.strip() else Text("(no answer)", style="dim"))
    parts.append(Rule(f"{elapsed_text(elapsed)} · {totals_text(model)}", style="dim"))
    return Group(*parts)
