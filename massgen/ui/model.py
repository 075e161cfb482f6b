"""What a terminal view shows, folded from events: the run's state plus each agent's stream.

Coordination state (answers, votes, failures, usage) comes from `record.state.RunState`,
the same fold the log directory is written from, so the screen and the logs agree. This
module adds only what a view needs on top: the tail of each agent's stream (bounded, the
full text is in the log), the tool calls in flight, and why the agent last started over.
No rich import here: the model is plain data, the renderers decide how it looks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, assert_never

from massgen.core import event_groups as groups
from massgen.core import events as ev
from massgen.record.state import RunState
from massgen.record.text import (
    check_line,
    files_text,
    hosted_lines,
    preview,
    seconds_text,
    subagent_line,
    tool_outcome,
)
from massgen.ui.action_text import RunText

# A panel shows only the tail; keep a little more than any screen can hold.
TAIL_CHARS = 6000
# Tool calls kept per agent as cards (the app's timeline), and what each card holds.
TOOL_CARDS = 200
CARD_CHARS = 4000
CARD_PROGRESS = 20
# Subagents listed under their parent: the latest ones.
SUBAGENTS_SHOWN = 8

# Model output may carry carriage returns or escape codes; on a live screen they would
# move the cursor. Tabs become spaces so wrapping can count columns.
_CONTROL = {c: None for c in (*range(9), *range(11, 32), 127)} | {9: "    "}

Kind = Literal["text", "reasoning", "tool", "answer", "vote", "restart", "failed", "final", "note"]


@dataclass(slots=True)
class ToolCard:
    """One tool call as the app's card shows it: what was asked, how it went, what came
    back. Each text is cut to `CARD_CHARS`; the full call is in the log."""

    call_id: str
    name: str
    arguments: str
    result: str | None = None  # None while it runs
    ok: bool = True
    held: bool = False
    duration_s: float = 0.0
    decision: str = ""  # the permission engine's word, when it gave one
    progress: list[str] = field(default_factory=list)  # the latest `CARD_PROGRESS` lines


@dataclass(slots=True)
class Pane:
    """One agent's recent output as (kind, text) runs, oldest first."""

    runs: list[tuple[Kind, str]] = field(default_factory=list)
    chars: int = 0
    limit: int = TAIL_CHARS  # how many characters of the stream are kept
    cards: list[ToolCard] = field(default_factory=list)  # the latest `TOOL_CARDS` calls
    # Tool calls in flight: id -> name, with its latest progress line once it reports.
    calls: dict[str, str] = field(default_factory=dict)
    note: str | None = None  # why the current run started over, until it ends
    run: int = 0
    text: RunText = field(default_factory=RunText)  # the current run's text as shown
    # Its subagents, "call_id/subagent" -> "name · running · task", the latest shown.
    subagents: dict[str, str] = field(default_factory=dict)

    def subagent(self, event: ev.SubagentStarted | ev.SubagentFinished) -> None:
        key = f"{event.call_id}/{event.subagent}"
        if isinstance(event, ev.SubagentStarted):
            self.subagents[key] = f"{event.subagent} · running · {preview(event.task, 60)}"
            for old in list(self.subagents)[:-SUBAGENTS_SHOWN]:
                del self.subagents[old]
        elif key in self.subagents:
            task = self.subagents[key].split(" · ", 2)[-1]
            took = seconds_text(event.duration_s)
            self.subagents[key] = f"{event.subagent} · {event.outcome} in {took} · {task}"

    def add(self, kind: Kind, text: str) -> None:
        text = text.translate(_CONTROL)
        if not text:
            return
        if self.runs and self.runs[-1][0] == kind:
            self.runs[-1] = (kind, self.runs[-1][1] + text)
        else:
            if self.runs and not self.runs[-1][1].endswith("\n"):
                text = "\n" + text  # reasoning, text and markers each start a line
            self.runs.append((kind, text))
        self.chars += len(text)
        if self.chars > 2 * self.limit:
            self._trim()

    def line(self, kind: Kind, text: str) -> None:
        """A marker on a line of its own (answers, votes, restarts, failures)."""
        if self.runs and self.runs[-1][0] == kind and not self.runs[-1][1].endswith("\n"):
            self.add(kind, "\n")
        self.add(kind, text + "\n")

    def _trim(self) -> None:
        drop = self.chars - self.limit
        while drop > 0 and self.runs:
            kind, text = self.runs[0]
            if len(text) <= drop:
                self.runs.pop(0)
                drop -= len(text)
                self.chars -= len(text)
            else:
                self.runs[0] = (kind, text[drop:])
                self.chars -= drop
                drop = 0

    def card(self, call_id: str) -> ToolCard | None:
        for card in reversed(self.cards):
            if card.call_id == call_id:
                return card
        return None


class ViewModel(groups.GroupFold[None]):
    """Apply every event in order; read `state` and `panes` to draw.

    `tail_chars`: how much of each agent's stream is kept (a scrollable view keeps more
    than a fixed panel)."""

    def __init__(self, question: str = "", *, tail_chars: int = TAIL_CHARS) -> None:
        self.state = RunState(question)
        self.panes: dict[str, Pane] = {}
        self.tail_chars = tail_chars

    def pane(self, agent: str) -> Pane:
        if agent not in self.panes:
            self.panes[agent] = Pane(limit=self.tail_chars)
        return self.panes[agent]

    @property
    def agents(self) -> list[str]:
        return list(self.state.agents)

    def apply(self, event: ev.AnyEvent) -> None:
        self.state.apply(event)
        self.fold(event)

    def on_stream(self, event: groups.AgentStream) -> None:
        pane = self.pane(event.agent)
        match event:
            case ev.AgentStarted(run=run, answers_in_view=seen, json_actions=json_actions):
                pane.run = run
                pane.text = RunText(json_actions)
                if run > 1:
                    pane.line("note", f"── run {run} · sees {', '.join(seen) or 'none'} ──")
            case ev.TextDelta(text=text):
                pane.add("text", pane.text.feed(text))
            case ev.ReasoningDelta(text=text):
                pane.add("reasoning", text)
            case ev.FinalTextDelta(text=text):
                pane.add("final", text)
            case _:
                assert_never(event)

    def on_tool(self, event: groups.ToolActivity) -> None:
        match event:
            case ev.ToolCallStarted() | ev.ToolCallFinished():
                self._tool(event)
            case ev.ToolCallProgress():
                self._tool_progress(event)
            case ev.HostedToolUsed():
                self._hosted(event)
            case ev.SubagentStarted() | ev.SubagentFinished():
                ok = not isinstance(event, ev.SubagentFinished) or event.outcome == "completed"
                self.pane(event.agent).line("tool" if ok else "failed", subagent_line(event))
                self.pane(event.agent).subagent(event)
            case ev.ToolSourceFailed(agent=agent, source=source, error=error):
                why = error.splitlines()[0] if error else source
                self.pane(agent).line("failed", f"✗ tools unavailable: {preview(why, 120)}")
            case ev.AgentWarning(agent=agent, message=message):
                self.pane(agent).line("failed", f"⚠ {preview(message, 160)}")
            case ev.PermissionDecided():
                self._permission(event)
            case _:
                assert_never(event)

    def _tool(self, event: ev.ToolCallStarted | ev.ToolCallFinished) -> None:
        pane = self.pane(event.agent)
        if isinstance(event, ev.ToolCallStarted):
            pane.calls[event.call_id] = event.name
            pane.line("tool", f"⚙ {event.name}({preview(event.arguments, 60)})")
            arguments = event.arguments[:CARD_CHARS]
            pane.cards = [*pane.cards, ToolCard(event.call_id, event.name, arguments)]
            del pane.cards[:-TOOL_CARDS]
        else:
            pane.calls.pop(event.call_id, None)
            card = pane.card(event.call_id)
            if card is not None:
                card.result, card.ok = event.result[:CARD_CHARS], event.ok
                card.held, card.duration_s = event.held, event.duration_s
            mark, _ = tool_outcome(event.ok, event.held)
            if event.held:
                text = f"{mark} {event.name} held for the final presentation"
            else:
                took = seconds_text(event.duration_s)
                text = f"{mark} {event.name} {took}: {preview(event.result, 80)}"
            pane.line("tool" if event.ok else "failed", text)

    def _tool_progress(self, event: ev.ToolCallProgress) -> None:
        pane = self.pane(event.agent)
        if event.call_id not in pane.calls:  # a line after the finish (or a restart) is stale
            return
        pane.calls[event.call_id] = f"{event.name} · {preview(event.message, 80)}"
        card = pane.card(event.call_id)
        if card is not None:
            card.progress = [*card.progress, preview(event.message, 200) or ""][-CARD_PROGRESS:]

    def _hosted(self, event: ev.HostedToolUsed) -> None:
        pane = self.pane(event.agent)
        for line in hosted_lines(event.activity):
            pane.line("tool" if event.activity.ok else "failed", line)

    def _permission(self, decided: ev.PermissionDecided) -> None:
        card = self.pane(decided.agent).card(decided.call_id)
        if card is not None:
            word = "allowed" if decided.allowed else "denied"
            card.decision = f"{word} by {decided.operator}: {decided.reason[:200]}"
        if not decided.allowed:  # an allowed call's own line shows it ran
            said = preview(decided.reason, 120)
            self.pane(decided.agent).line("failed", f"✗ refused {decided.tool}: {said}")

    def on_decision(self, event: groups.Decision) -> None:
        match event:
            case ev.AnswerPublished(agent=agent, label=label, content=content):
                unshown = self.pane(agent).text.unshown(content)
                if unshown:  # it came as a tool call's argument
                    self.pane(agent).line("text", unshown)
                files = files_text(event.files)
                said = f"✓ new answer {label}" + (f" · {files}" if files else "")
                self._settle(agent, "answer", said)
            case ev.AnswerChecked(agent=agent, verdict=verdict):
                self.pane(agent).line(_check_kind(verdict), check_line(event, 200))
            case ev.VoteCast(agent=agent, target_label=label, reason=reason):
                text = f"✓ vote for {label}" + (f": {preview(reason, 120)}" if reason else "")
                self._settle(agent, "vote", text)
            case ev.VoteInvalidated(agent=agent, target_label=old, newer_label=new):
                self._start_over(agent, f"vote for {old} retired by {new}")
            case ev.AgentRestarted(agent=agent, reason=reason):
                self.pane(agent).calls.clear()
                self._start_over(agent, f"restarted: {reason}")
            case ev.ActionRejected(agent=agent, reason=reason, attempt=attempt):
                self.pane(agent).line("restart", f"✗ action rejected (#{attempt}): {reason}")
            case ev.AgentFailed(agent=agent, error=error, stopped=stopped):
                self.pane(agent).calls.clear()
                self.pane(agent).line("failed", f"■ {error}" if stopped else f"✗ failed: {error}")
            case _:
                assert_never(event)

    def _start_over(self, agent: str, note: str) -> None:
        """The agent's current run no longer counts; the pane says why until it ends."""
        pane = self.pane(agent)
        pane.note = note
        pane.line("restart", f"↻ {note}")

    def on_aid(self, event: groups.AidActivity) -> None:
        match event:
            case ev.BroadcastAsked(agent=agent, question=question, to=to):
                self.pane(agent).line("tool", f"? asks {', '.join(to)}: {preview(question, 120)}")
            case ev.BroadcastAnswered():
                self._answered(event)
            case ev.PersonaAssigned(agent=agent, persona=persona, summary=summary):
                shown = f"{summary}: {persona}" if summary else persona
                self.pane(agent).line("note", f"🎭 persona · {preview(shown, 200)}")
            case ev.CriteriaGenerated(agent=agent, criteria=criteria):
                pane = self.pane(agent)
                pane.line("note", f"📋 evaluation criteria for the team ({len(criteria)})")
                for line in criteria:
                    pane.line("note", f"  {preview(line, 160)}")
            case ev.QuestionParaphrased(agent=agent, paraphrase=paraphrase):
                said = f"🔀 reads the question as · {preview(paraphrase, 200)}"
                self.pane(agent).line("note", said)
            case ev.GeneratorFailed(agent=agent, what=what, error=error):
                text = f"⚠ {what} not generated, going on without: {preview(error, 120)}"
                self.pane(agent).line("failed", text)
            case _:
                assert_never(event)

    def _answered(self, event: ev.BroadcastAnswered) -> None:
        agent, who, answer = event.agent, event.responder, event.answer
        mark = "↩" if event.ok else "✗"
        text = f"{mark} {who} answers: {preview(answer, 120)}"
        self.pane(agent).line("tool" if event.ok else "failed", text)
        if event.ok and who in self.panes:  # the answering agent's pane says so too
            self.pane(who).line("note", f"↪ answered {agent}: {preview(answer, 80)}")

    def on_progress(self, event: groups.RunProgress) -> None:
        match event:
            case ev.RunStarted(agents=agents):
                for agent in agents:
                    self.pane(agent)
            case ev.PresentationStarted(agent=agent):
                self.pane(agent).line("note", "── final answer ──")
            case ev.EvaluationStarted(agent=agent, debug_override=override):
                what = "the debug answer (debug_final_answer)" if override else "the final answer"
                self.pane(agent).line("note", f"── evaluating {what} ──")
            case ev.EvaluationFinished(agent=agent, submitted=True, note=note):
                self.pane(agent).line("answer", f"✓ submitted ({preview(note, 120)})")
            case ev.EvaluationFinished(agent=agent):
                self.pane(agent).line("restart", "↻ asks to restart the coordination")
            case ev.OrchestrationRestarted():
                self._restarted(event)
            case ev.UsageReported() | ev.CoordinationFinished() | ev.RunFinished():
                pass  # drawn from `state`, not into a pane
            case _:
                assert_never(event)

    def _restarted(self, event: ev.OrchestrationRestarted) -> None:
        """Every pane marks where the new attempt begins, with the reason."""
        banner = f"══ attempt {event.attempt}/{event.max_attempts}: {preview(event.reason, 160)} ══"
        for pane in self.panes.values():
            pane.calls.clear()
            pane.note = None
            pane.line("restart", banner)

    def _settle(self, agent: str, kind: Kind, text: str) -> None:
        pane = self.pane(agent)
        pane.calls.clear()
        pane.note = None
        pane.line(kind, text)


def state_text(model: ViewModel, agent: str) -> tuple[str, str]:
    """(style key, one-line state) for an agent: thinking, answered agent2.3, voted, ..."""
    state = model.state.agent(agent)
    pane = model.pane(agent)
    latest = state.answers[-1].label if state.answers else None
    match state.status:
        case "failed" if state.stopped:
            return "failed", f"■ {state.error}"
        case "failed":
            return "failed", f"✗ failed: {preview(state.error, 200)}"
        case "presenting":
            return "winner", "★ presenting the final answer"
        case "evaluating":
            return "winner", "★ evaluating the final answer"
        case "done":
            return _done_text(model, agent)
        case "voted" if state.vote is not None:
            return "vote", f"✓ voted for {state.vote.target_label}"
        case "answered" if latest:
            return "answer", f"✓ answered {latest}"
        case "restarting":
            return "restart", f"↻ {pane.note or 'restarted with new answers'}"
        case "streaming":
            return "busy", _busy_text(pane)
    return "idle", f"↻ {pane.note}" if pane.note else "waiting"


def _busy_text(pane: Pane) -> str:
    names = list(pane.calls.values())
    doing = "⋯ thinking"
    if names:
        doing = f"⚙ {names[0]}…" if len(names) == 1 else f"⚙ {len(names)} tools…"
    extras = [f"run {pane.run}"] if pane.run > 1 else []
    if pane.note:
        extras.append(pane.note)
    return doing + (f" ({'; '.join(extras)})" if extras else "")


def _done_text(model: ViewModel, agent: str) -> tuple[str, str]:
    state = model.state.agent(agent)
    parts = []
    if state.answers:
        parts.append(f"answered {state.answers[-1].label}")
    if state.vote is not None:
        parts.append(f"voted for {state.vote.target_label}")
    text = " · ".join(parts) or "no answer"
    if model.state.winner == agent:
        return "winner", f"★ winner · {text}"
    return "done", text


def display_name(model: ViewModel, agent: str) -> str:
    """The agent's id with its anonymous stem, so `agent2.3` in a vote can be traced."""
    label = model.state.agent(agent).label
    return agent if label == agent else f"{agent} ({label})"


def totals_text(model: ViewModel) -> str:
    """answers 3 · votes 2/3 · tokens 1,801 · est. $0.0012; against the budget when the
    run has one: tokens 1,801/50,000 · est. $0.0012/$0.50"""
    state = model.state
    answers = sum(len(a.answers) for a in state.agents.values())
    live = [a for a in state.agents.values() if a.status != "failed"]
    votes = sum(1 for a in live if a.vote is not None)
    spent = state.totals()
    tokens = f"tokens {_count(spent.usage.total_tokens)}"
    if state.max_tokens is not None:
        tokens += f"/{_count(state.max_tokens)}"
    parts = [f"answers {answers}", f"votes {votes}/{len(live)}", tokens]
    if spent.cost_usd is not None or state.max_cost is not None:
        cost = f"est. ${spent.cost_usd or 0.0:.4f}"
        parts.append(cost if state.max_cost is None else f"{cost}/${state.max_cost:.2f}")
    return " · ".join(parts)


def phase_text(model: ViewModel) -> str:
    """coordinating, presenting (agent), attempt 2/3 · evaluating (agent), finished."""
    state = model.state
    attempt = f"attempt {state.attempt}/{state.max_attempts} · " if state.attempt > 1 else ""
    if state.phase == "presenting":
        phase = f"presenting ({state.presenter})" if state.presenter else "selecting"
    elif state.phase == "evaluating":
        phase = f"evaluating ({state.presenter})" if state.presenter else "evaluating"
    else:
        phase = state.phase
    return attempt + phase


def _count(n: int) -> str:
    if n >= 100_000:
        return f"{n / 1000:.0f}k"
    if n >= 10_000:
        return f"{n / 1000:.1f}k"
    return f"{n:,}"


def elapsed_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def tally_text(tally: dict[str, int]) -> str:
    ranked = sorted(tally.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{label} = {n}" for label, n in ranked) or "no votes"


def _check_kind(verdict: str) -> Kind:
    """How a verifier's verdict on an answer is coloured."""
    if verdict == "unchecked":
        return "note"
    return "answer" if verdict == "passed" else "failed"
