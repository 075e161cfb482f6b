"""Plain output: readable streaming text with agent prefixes, then the final answer.

Used when stdout is not a terminal, with --no-display, or with NO_COLOR / TERM=dumb.
Agents stream concurrently, so text is printed a whole line at a time per agent.
"""

from __future__ import annotations

import sys
from typing import TextIO, assert_never

from massgen.backends.pricing import format_cost
from massgen.core import event_groups as groups
from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.core.usage import Spend, UsageLedger
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

_ENDINGS = (ev.CoordinationFinished, ev.RunFinished)


class PlainView(groups.GroupFold[str | None]):
    """Each event as the line it prints (`fold`: one `on_<group>` per group of events)."""

    def __init__(
        self, out: TextIO | None = None, *, show_text: bool = True, show_cost: bool = False
    ) -> None:
        self.out = out or sys.stdout
        self.show_text = show_text
        # Tokens and estimated cost per agent after the final answer.
        self.show_cost = show_cost
        self._pending: dict[str, str] = {}
        self._runs: dict[str, RunText] = {}  # each agent's current run, as shown
        self._final_started = False
        self._usage = UsageLedger()

    def __call__(self, event: ev.AnyEvent) -> None:
        self._usage(event)
        if isinstance(event, _ENDINGS):
            self.close()  # half-written lines belong before the summary, not after it
        line = self.fold(event)  # None for an event that prints no line (or streams)
        if line is not None:
            self._flush_agent(getattr(event, "agent", None))
            self._write(line + "\n")

    def on_stream(self, event: groups.AgentStream) -> None:
        """Text streams a line at a time as it completes; it is never the event's line."""
        match event:
            case ev.AgentStarted(agent=agent, json_actions=json_actions):
                self._runs[agent] = RunText(json_actions)
            case ev.TextDelta(agent=agent, text=text):
                self._stream(agent, self._runs.setdefault(agent, RunText()).feed(text))
            case ev.ReasoningDelta() | ev.FinalTextDelta():
                pass  # the final answer prints whole, in RunFinished's block
            case _:
                assert_never(event)

    def on_tool(self, event: groups.ToolActivity) -> str | None:
        return _tool_line(event)

    def on_aid(self, event: groups.AidActivity) -> str:
        return _aid_line(event)

    def on_decision(self, event: groups.Decision) -> str:
        match event:
            case ev.AnswerPublished(agent=agent, label=label, content=content):
                unshown = self._runs.setdefault(agent, RunText()).unshown(content)
                if unshown:  # it came as a tool call's argument
                    self._stream(agent, f"\n{unshown}\n")
                files = files_text(event.files)
                return f"[{agent}] ✓ new answer {label}" + (f" · {files}" if files else "")
            case ev.AnswerChecked(agent=agent):
                return f"[{agent}] {check_line(event, 200)}"
            case ev.VoteCast(agent=agent, target_label=label, reason=reason):
                return f"[{agent}] ✓ vote for {label}" + (f": {reason}" if reason else "")
            case ev.VoteInvalidated(agent=agent, target_label=old, newer_label=new):
                return f"[{agent}] vote for {old} no longer stands ({new} arrived)"
            case ev.ActionRejected(agent=agent, reason=reason):
                return f"[{agent}] ✗ action rejected: {reason}"
            case ev.AgentRestarted(agent=agent, reason=reason):
                return f"[{agent}] ↻ restarting: {reason}"
            case ev.AgentFailed(agent=agent, error=error, stopped=stopped):
                return f"[{agent}] ■ {error}" if stopped else f"[{agent}] ✗ failed: {error}"
            case _:
                assert_never(event)

    def on_progress(self, event: groups.RunProgress) -> str | None:
        match event:
            case ev.RunStarted(agents=agents):
                return f"massgen: {len(agents)} agent(s): {', '.join(agents)}"
            case ev.UsageReported():
                return None
            case ev.CoordinationFinished() as done:
                return _coordination_summary(done)
            case ev.PresentationStarted(agent=agent):
                self._final_started = True
                return f"\n[{agent}] presenting the final answer…"
            case ev.EvaluationStarted(agent=agent, debug_override=override):
                what = "the debug answer (debug_final_answer)" if override else "the final answer"
                return f"\n[{agent}] evaluating {what}…"
            case ev.EvaluationFinished(agent=agent, submitted=True, note=note):
                return f"[{agent}] ✓ submitted ({note})"
            case ev.EvaluationFinished():
                return None  # OrchestrationRestarted says why
            case ev.OrchestrationRestarted() as restart:
                return _restart_banner(restart)
            case ev.RunFinished(outcome=finished):
                costs = cost_block(self._usage) if self.show_cost else ""
                return _final_block(finished) + costs
            case _:
                assert_never(event)

    def close(self) -> None:
        """Print what is still buffered (a run cut short mid-line)."""
        for agent in list(self._pending):
            self._flush_agent(agent)

    def _stream(self, agent: str, text: str) -> None:
        if not self.show_text:
            return
        pending = self._pending.get(agent, "") + text
        *lines, rest = pending.split("\n")
        for line in lines:
            if line.strip():
                self._write(f"[{agent}] {line}\n")
        self._pending[agent] = rest

    def _flush_agent(self, agent: str | None) -> None:
        if agent and self._pending.get(agent, "").strip():
            self._write(f"[{agent}] {self._pending[agent]}\n")
        if agent:
            self._pending.pop(agent, None)

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def _tool_line(event: groups.ToolActivity) -> str | None:
    match event:
        case ev.ToolCallStarted(agent=agent, name=name, arguments=arguments):
            return f"[{agent}] ⚙ {name}({preview(arguments, 80)})"
        case ev.ToolCallProgress(agent=agent, name=name, message=message):
            return f"[{agent}] … {name}: {preview(message, 120)}"
        case ev.ToolCallFinished(agent=agent, name=name, held=True):
            return f"[{agent}] ⏸ {name} held for the final presentation (planning mode)"
        case ev.ToolCallFinished(agent=agent, name=name, result=result, ok=ok) as done:
            mark, _ = tool_outcome(ok, held=False)
            took = seconds_text(done.duration_s)
            return f"[{agent}] {mark} {name} {took}: {preview(result, 120)}"
        case ev.HostedToolUsed(agent=agent, activity=activity):
            return "\n".join(f"[{agent}] {line}" for line in hosted_lines(activity))
        case ev.SubagentStarted(agent=agent) | ev.SubagentFinished(agent=agent):
            return f"[{agent}] {subagent_line(event, 120)}"
        case ev.ToolSourceFailed(agent=agent, error=error):
            return f"[{agent}] ✗ tools unavailable: {error}"
        case ev.AgentWarning(agent=agent, message=message):
            return f"[{agent}] ⚠ {message}"
        case ev.PermissionDecided(allowed=True):
            return None
        case ev.PermissionDecided(agent=agent, tool=tool, reason=reason):
            return f"[{agent}] ✗ refused {tool}: {preview(reason, 120)}"
        case _:
            assert_never(event)


def _aid_line(event: groups.AidActivity) -> str:
    match event:
        case ev.PersonaAssigned(agent=agent, persona=persona, summary=summary):
            return f"[{agent}] persona{f' ({summary})' if summary else ''}: {persona}"
        case ev.CriteriaGenerated(agent=agent, criteria=criteria):
            listed = "".join(f"\n[{agent}]   {line}" for line in criteria)
            return f"[{agent}] evaluation criteria for the team:{listed}"
        case ev.QuestionParaphrased(agent=agent, paraphrase=paraphrase):
            return f"[{agent}] reads the question as: {paraphrase}"
        case ev.GeneratorFailed(agent=agent, what=what, error=error):
            return f"[{agent}] ⚠ {what} not generated, going on without: {error}"
        case ev.BroadcastAsked(agent=agent, question=question, to=to):
            return f"[{agent}] ? asks {', '.join(to)}: {preview(question, 120)}"
        case ev.BroadcastAnswered(agent=agent, responder=responder, answer=answer, ok=ok):
            mark = "↩" if ok else "✗"
            return f"[{agent}] {mark} {responder} answers: {preview(answer, 120)}"
        case _:
            assert_never(event)


def _coordination_summary(done: ev.CoordinationFinished) -> str:
    tally = ", ".join(f"{label}: {n}" for label, n in done.tally.items()) or "no votes"
    lines = [f"\nvotes — {tally}", f"winner: {done.winner or 'none'} ({done.winner_label or '-'})"]
    if done.tie_break:
        lines.append(f"tie-break: {done.tie_break}")
    lines.append(f"reason: {done.reason}")
    if done.agreement and not done.reason.startswith("agreement"):
        lines.append(f"agreement: {done.agreement}")
    return "\n".join(lines)


def _restart_banner(restart: ev.OrchestrationRestarted) -> str:
    lines = [
        "",
        f"=== orchestration restart: attempt {restart.attempt}/{restart.max_attempts} ===",
        f"reason: {restart.reason}",
    ]
    if restart.instructions:
        lines.append(f"instructions: {restart.instructions}")
    return "\n".join(lines)


def cost_block(ledger: UsageLedger) -> str:
    """Tokens and estimated cost per agent and in total; "n/a" for models without a price."""
    usage = ledger.by_agent()
    if not usage:
        return ""
    width = max(len(agent) for agent in [*usage, "total"])
    lines = ["", "tokens and estimated cost:"]
    for agent, spent in usage.items():
        lines.append(f"  {agent:<{width}}  {_spent(spent)}")
    lines.append(f"  {'total':<{width}}  {_spent(ledger.total())}")
    return "\n".join(lines)


def _spent(spent: Spend) -> str:
    used = spent.usage
    cached = f" (cached {used.cached_input_tokens:,})" if used.cached_input_tokens else ""
    tokens = f"in {used.input_tokens:,}{cached} · out {used.output_tokens:,}"
    if spent.cost_usd is None:
        return f"{tokens} · n/a"
    partial = " + n/a" if spent.unpriced else ""
    return f"{tokens} · {format_cost(spent.cost_usd)}{partial}"


def _final_block(finished: Outcome) -> str:
    header = "=" * 20 + " final answer " + "=" * 20
    note = ""
    if finished.status is not Status.OK:
        note = f"\n({finished.status}: {finished.reason})"
    for agent, error in finished.failed_agents.items():
        note += f"\n(agent {agent} failed: {error})"
    return f"\n{header}\n{finished.answer or '(no answer)'}{note}"
