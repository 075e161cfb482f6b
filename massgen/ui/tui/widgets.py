"""The app's widgets. Each draws from `ui.model.ViewModel` when asked (`show`), and only
what changed since it last drew: a stream grows at its end, so its last block is updated
and new blocks are mounted; everything is rebuilt only when another agent is selected or
the kept tail was trimmed at its start.

Model text goes into `rich.text.Text` or Markdown, never into Textual markup, so a model's
`[bold]` is shown as written.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, OptionList, Static

from massgen.backends.pricing import format_cost
from massgen.core.status import Status
from massgen.record.state import LoggedAnswer
from massgen.record.text import files_text, preview, seconds_text
from massgen.ui.model import Kind, Pane, ToolCard, ViewModel, display_name, state_text, tally_text
from massgen.ui.styles import STATE_STYLES, STREAM_STYLES


def agent_prompt(model: ViewModel, agent: str, model_name: str) -> Text:
    """Three lines for the agent list: name, state, model · tokens · cost."""
    key, state = state_text(model, agent)
    spend = model.state.spend(agent)
    facts = [model_name] if model_name else []
    facts.append(f"{spend.usage.total_tokens:,} tok")
    if spend.cost_usd is not None:
        facts.append(format_cost(spend.cost_usd))
    text = Text(display_name(model, agent), style="bold", no_wrap=True, overflow="ellipsis")
    text.append("\n" + (preview(state, 60) or ""), style=STATE_STYLES[key] or "default")
    text.append("\n" + " · ".join(facts), style="dim")
    for line in model.pane(agent).subagents.values():  # under their parent
        text.append("\n ↳ " + line, style="cyan" if " · running · " in line else "dim")
    text.append("\n")  # the blank line parts agents
    return text


class AgentList(OptionList):
    """One entry per agent; the highlighted one is the agent shown on the right."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.prompts: list[Text] = []  # as last drawn

    def sync(self, model: ViewModel, models: dict[str, str]) -> None:
        agents = model.agents
        shown = self.prompts
        for index, agent in enumerate(agents):
            prompt = agent_prompt(model, agent, models.get(agent, ""))
            if index < len(shown) and shown[index] == prompt:
                continue  # replacing a prompt lays the whole list out again
            if index < self.option_count:
                self.replace_option_prompt_at_index(index, prompt)
                shown[index] = prompt
            else:
                self.add_option(prompt)
                shown.append(prompt)
        if self.highlighted is None and agents:
            self.highlighted = 0

    def reset(self) -> None:
        """A new turn: its agents arrive with its first events."""
        self.clear_options()
        self.prompts = []


def follow(view: VerticalScroll) -> None:
    """At the end now: stay at the end once what is drawn next is laid out. Scrolled up:
    stay put, the user is reading. (Not `anchor()`: it draws a short stream at the bottom.)"""
    if view.is_vertical_scroll_end:
        view.call_after_refresh(view.scroll_end, animate=False)


# --- the selected agent's stream -----------------------------------------------------------


class MarkdownText(Static):
    """Markdown drawn by rich in one widget. Textual's `Markdown` mounts a widget per
    block (a list item is three), so a long stream or answer costs thousands of mounts:
    eight agents streaming kept a core busy with them. This one re-renders its text when
    it changes, and only when it is on screen."""

    def __init__(self, source: str = "", **kwargs: Any) -> None:
        super().__init__(_rich_markdown(source) if source else "", **kwargs)
        self.source = source

    def show_source(self, source: str) -> None:
        if source != self.source:
            self.source = source
            self.update(_rich_markdown(source) if source else "")


def _rich_markdown(source: str) -> RenderableType:
    from rich.markdown import Markdown  # after the first frame: only a stream needs it

    return Markdown(source)


def _block(kind: Kind, text: str) -> Widget:
    if kind in ("text", "final"):
        return MarkdownText(text)
    if kind == "reasoning":
        return Collapsible(
            Static(Text(text.strip(), style="dim italic")),
            title=_reasoning_title(text),
            collapsed=True,
        )
    return Static(Text(text.rstrip("\n"), style=STREAM_STYLES[kind]))


def _reasoning_title(text: str) -> str:
    return f"reasoning · {len(text):,} chars"


def _update(widget: Widget, kind: Kind, text: str) -> None:
    if isinstance(widget, MarkdownText):
        widget.show_source(text)
    elif isinstance(widget, Collapsible):
        widget.title = _reasoning_title(text)
        widget.query_one(Static).update(Text(text.strip(), style="dim italic"))
    elif isinstance(widget, Static):
        widget.update(Text(text.rstrip("\n"), style=STREAM_STYLES[kind]))


class StreamView(VerticalScroll):
    """The selected agent's stream: text as Markdown, reasoning folded, markers as lines."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agent: str | None = None
        self.shown: list[tuple[Kind, str]] = []

    def reset(self) -> None:
        self.agent, self.shown = None, []
        self.remove_children()

    def show(self, agent: str, pane: Pane) -> None:
        follow(self)
        runs = pane.runs
        last = len(self.shown) - 1
        same = agent == self.agent and len(runs) >= len(self.shown)
        if same and last >= 0:
            same = runs[:last] == self.shown[:last] and runs[last][0] == self.shown[last][0]
        if not same:
            self.agent, self.shown = agent, []
            self.remove_children()
            last = -1
        blocks = list(self.children)
        if last >= 0 and runs[last] != self.shown[last]:
            _update(blocks[last], *runs[last])
        new = [_block(kind, text) for kind, text in runs[len(self.shown) :]]
        if new:
            self.mount_all(new)
        self.shown = list(runs)


# --- tool calls as cards -------------------------------------------------------------------


def card_title(card: ToolCard) -> str:
    if card.result is None:
        return f"⚙ {card.name} · running" + (f" · {card.progress[-1]}" if card.progress else "")
    if card.held:
        return f"⏸ {card.name} · held for the final presentation"
    mark = "✓" if card.ok else "✗"
    return f"{mark} {card.name} · {seconds_text(card.duration_s)}"


def card_body(card: ToolCard) -> RenderableType:
    rows = Table.grid(padding=(0, 1))
    rows.add_column(style="bold", no_wrap=True)
    rows.add_column()
    rows.add_row("arguments", Text(card.arguments or "(none)"))
    if card.decision:
        rows.add_row("permission", Text(card.decision))
    for number, line in enumerate(card.progress):
        rows.add_row("progress" if number == 0 else "", Text(line, style="dim"))
    if card.result is not None:
        rows.add_row("result", Text(card.result or "(empty)", style="" if card.ok else "red"))
    return rows


# A run of more than FOLD_AFTER finished calls to one MCP server in a row shows its last
# FOLD_AFTER; the earlier ones fold behind one "+N more" line that opens them.
FOLD_AFTER = 2


def mcp_server(name: str) -> str | None:
    """`fs` for `mcp__fs__read_file` (how `tools/mcp/naming.py` names MCP tools)."""
    parts = name.split("__")
    return parts[1] if len(parts) >= 3 and parts[0] == "mcp" else None


def folded_runs(cards: list[ToolCard]) -> list[list[str]]:
    """The call ids to fold: in each run of finished calls to one MCP server, all but
    the last `FOLD_AFTER`. A call still running is never folded."""
    runs: list[list[ToolCard]] = []
    for card in cards:
        server = mcp_server(card.name) if card.result is not None else None
        if server is not None and runs and runs[-1] and mcp_server(runs[-1][-1].name) == server:
            runs[-1].append(card)
        else:
            runs.append([card] if server is not None else [])
    return [[c.call_id for c in run[:-FOLD_AFTER]] for run in runs if len(run) > FOLD_AFTER]


class MoreCalls(Static, can_focus=True):
    """ "+N more mcp__fs calls": Enter or a click shows the calls it folds, or folds them."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "open_or_fold", "open")]

    def __init__(self) -> None:
        super().__init__()
        self.opened = False
        self.folded: list[Collapsible] = []
        self.server = ""

    def fold(self, server: str, cards: list[Collapsible]) -> None:
        self.server, self.folded = server, cards
        for card in cards:
            card.display = self.opened
        line = f"{'▼' if self.opened else '▶'} +{len(cards)} more mcp__{server} calls"
        self.update(Text(line + (" (shown)" if self.opened else ""), style="dim"))

    def action_open_or_fold(self) -> None:
        self.opened = not self.opened
        self.fold(self.server, self.folded)

    def on_click(self) -> None:
        self.action_open_or_fold()


class ToolCards(VerticalScroll):
    """The selected agent's tool calls, newest last, each a card that opens; long runs of
    MCP calls folded behind a "+N more" line."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agent: str | None = None
        self.cards: dict[str, tuple[Collapsible, Static, str]] = {}
        self.more: dict[str, MoreCalls] = {}  # by the first call id of the run it folds

    def reset(self) -> None:
        self.agent, self.cards, self.more = None, {}, {}
        self.remove_children()

    def show(self, agent: str, pane: Pane) -> None:
        follow(self)
        if agent != self.agent:
            self.agent, self.cards, self.more = agent, {}, {}
            self.remove_children()
        current = {card.call_id for card in pane.cards}
        for call_id in [c for c in self.cards if c not in current]:  # trimmed from the front
            self.cards.pop(call_id)[0].remove()
        for card in pane.cards:
            look = repr((card.result, card.decision, card.progress[-1:], card.held))
            if card.call_id not in self.cards:
                body = Static(card_body(card))
                fold = Collapsible(body, title=card_title(card), collapsed=True)
                self.cards[card.call_id] = (fold, body, look)
                self.mount(fold)
            elif self.cards[card.call_id][2] != look:
                fold, body, _ = self.cards[card.call_id]
                fold.title = card_title(card)
                body.update(card_body(card))
                self.cards[card.call_id] = (fold, body, look)
        self._fold(pane)
        if not pane.cards and not self.children:
            self.mount(Static(Text("no tool calls yet", style="dim")))

    def _fold(self, pane: Pane) -> None:
        names = {card.call_id: card.name for card in pane.cards}
        runs = {run[0]: run for run in folded_runs(pane.cards)}
        for first in [f for f in self.more if f not in runs]:  # the run was trimmed
            self.more.pop(first).remove()
        for first, run in runs.items():
            more = self.more.get(first)
            if more is None:
                more = self.more[first] = MoreCalls()
                self.mount(more, before=self.cards[first][0])
            more.fold(mcp_server(names[first]) or "", [self.cards[c][0] for c in run])


# --- the answers board ---------------------------------------------------------------------


class AnswerBoard(VerticalScroll):
    """Every answer version (open it to read) and every vote (open it for the reason)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.answers: dict[str, Collapsible] = {}
        self.votes: list[Collapsible] = []
        self.votes_heading = Static(Text("Votes", style="bold"))

    def compose(self) -> ComposeResult:
        yield Static(Text("Answers", style="bold"))
        yield self.votes_heading

    def reset(self) -> None:
        """A new turn: its labels start again at agent1.1, so every fold goes."""
        for fold in [*self.answers.values(), *self.votes]:
            fold.remove()
        self.answers, self.votes = {}, []

    def show(self, model: ViewModel) -> None:
        state = model.state
        for agent in model.agents:
            for answer in state.agent(agent).answers:
                title = self._answer_title(model, agent, answer.label)
                fold = self.answers.get(answer.label)
                if fold is None:
                    fold = Collapsible(*_answer_parts(answer), title=title, collapsed=True)
                    self.answers[answer.label] = fold
                    self.mount(fold, before=self.votes_heading)
                elif fold.title != title:
                    fold.title = title
        for index, vote in enumerate(state.votes):
            standing = "standing" if vote.standing else f"ended by {vote.ended_by or 'a restart'}"
            title = f"{vote.voter} → {vote.target_label} ({standing})"
            if index < len(self.votes):
                if self.votes[index].title != title:
                    self.votes[index].title = title
                continue
            reason = Static(Text(vote.reason or "(no reason given)"))
            fold = Collapsible(reason, title=title, collapsed=True)
            self.votes.append(fold)
            self.mount(fold)

    @staticmethod
    def _answer_title(model: ViewModel, agent: str, label: str) -> str:
        voters = [v.voter for v in model.state.votes if v.standing and v.target_label == label]
        votes = f"votes: {', '.join(voters)}" if voters else "no votes"
        return f"{label} · {display_name(model, agent)} · {votes}"


def _answer_parts(answer: LoggedAnswer) -> list[Widget]:
    """The answer in Markdown, then what it changed in its workspace, as a diff to open."""
    parts: list[Widget] = [MarkdownText(answer.content)]
    files = files_text(answer.files)
    if files:
        parts.append(Static(Text(files, style="dim")))
    if answer.diff:
        diff = Static(Syntax(answer.diff, "diff", theme="ansi_dark", word_wrap=True))
        parts.append(Collapsible(diff, title="workspace diff", collapsed=True))
    return parts


# --- the end -------------------------------------------------------------------------------


def outcome_text(model: ViewModel) -> Text:
    """Winner, tally, tie-break, agreement and how the run ended, one line each."""
    state = model.state
    finished, outcome = state.finished, state.outcome
    text = Text()
    if state.winner:
        cut_short = finished is not None and not finished.status.complete
        title = "best answer so far" if cut_short else "winner"
        text.append(f"{title}: {state.winner} ({state.winner_label})", style="bold green")
    else:
        text.append("no winner yet" if finished is None else "no winner", style="bold red")
    text.append(f"\nvotes: {tally_text(outcome.tally if outcome else state.standing_tally())}")
    if outcome and outcome.tie_break:
        text.append(f"\ntie-break: {outcome.tie_break}")
    if outcome and outcome.agreement:
        text.append(f"\nagreement: {outcome.agreement}")
    if finished is not None and finished.status is not Status.OK:
        text.append(f"\n{finished.status}: {finished.reason}", style="yellow")
    return text


class FinalView(VerticalScroll):
    """How the team got there, then the final answer as Markdown (streamed as presented)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summary = Static(Text("The team is still working.", style="dim"), id="outcome")
        self.answer = MarkdownText(id="final-answer")
        self.shown = ("", "")

    def reset(self) -> None:
        self.shown = ("", "")
        self.summary.update(Text("The team is still working.", style="dim"))
        self.answer.show_source("")

    def compose(self) -> ComposeResult:
        yield self.summary
        yield self.answer

    def show(self, model: ViewModel) -> None:
        state = model.state
        if state.outcome is None and state.finished is None:
            return
        finished = state.finished
        answer = finished.answer if finished else "".join(state.final_parts)
        summary = outcome_text(model)
        if (summary.plain, answer) == self.shown:
            return
        self.shown = (summary.plain, answer)
        self.summary.update(summary)
        self.answer.show_source(answer if answer.strip() or finished is None else "*(no answer)*")
