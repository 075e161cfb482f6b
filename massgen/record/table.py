"""coordination_table.txt: one column per agent, one row per coordination event.

A tool call is one row, when it finishes: its name, ok / error / held, and how long it took.
A resumed run's log holds every attempt; a line marks where each later attempt begins.

Column width follows the agent count, so the table fits `width` characters for up to
`(width + 3) // (MIN_COL + 3)` agents (9 at the default 120); cells wrap, long reasons
are cut, and more agents than that widen the table rather than become unreadable.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import assert_never

from massgen.core import event_groups as groups
from massgen.core import events as ev
from massgen.record.text import check_line, files_text, preview, seconds_text, tool_outcome

WIDTH = 120
MIN_COL = 10
MAX_COL = 32
MAX_CELL_LINES = 6
REASON_CHARS = 60
SEP = " | "


def coordination_table(events: Iterable[ev.AnyEvent], *, width: int = WIDTH) -> str:
    """Render the coordination events of one run as fixed-width text ending in a newline."""
    events = list(events)
    agents = _agent_ids(events)
    if not agents:
        return "(no coordination events)\n"
    col = max(MIN_COL, min(MAX_COL, (width - len(SEP) * (len(agents) - 1)) // len(agents)))
    total = col * len(agents) + len(SEP) * (len(agents) - 1)
    lines = [*_row([_middle(a, col) for a in agents], col), "-+-".join(["-" * col] * len(agents))]
    for event in events:
        if isinstance(event, ev.RunStarted) and event.attempt > 1:
            lines.append(_fit(f"~~ attempt {event.attempt}: resumed from the journal ~~", total))
            continue
        if isinstance(event, ev.OrchestrationRestarted):
            lines.append("=" * total)
            text = f"coordination {event.attempt}/{event.max_attempts} restarted: {event.reason}"
            lines.extend(_wrap(text, total, limit=MAX_CELL_LINES))
            lines.append("=" * total)
            continue
        cell = _cell(event)
        if cell is not None:
            agent, text = cell
            lines.extend(_row([text if a == agent else "" for a in agents], col))
    footer = _footer(events)
    if footer:
        lines.append("=" * total)
        lines.extend(line for text in footer for line in _wrap(text, total, limit=None))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def table_from_log(turn_dir: Path) -> str:
    """The table for a recorded turn, rebuilt from its events.jsonl.

    A torn last line (the process died mid-write) is skipped rather than fatal.
    """
    events = []
    with (Path(turn_dir) / "events.jsonl").open(encoding="utf-8") as f:
        for line in f:
            try:
                events.append(ev.event_from_dict(json.loads(line)))
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return coordination_table(events)


def _agent_ids(events: list[ev.AnyEvent]) -> list[str]:
    """Config order from RunStarted, then anyone else in order of first appearance."""
    ids: list[str] = []
    for event in events:
        if isinstance(event, ev.RunStarted):
            ids.extend(a for a in event.agents if a not in ids)
        elif (cell := _cell(event)) is not None and cell[0] not in ids:
            ids.append(cell[0])
    return ids


def _cell(event: ev.AnyEvent) -> tuple[str, str] | None:
    """(agent, text) for an event that fills a cell; None for events without a column."""
    return groups.by_group(
        event,
        stream=_stream_cell,
        tool=_tool_cell,
        decision=lambda decided: (decided.agent, _decision_text(decided)),
        aid=lambda aided: (aided.agent, _aid_text(aided)),
        progress=_progress_cell,
    )


def _stream_cell(event: groups.AgentStream) -> tuple[str, str] | None:
    match event:
        case ev.AgentStarted():
            seen = ", ".join(event.answers_in_view) or "none"
            only = " · vote only" if event.vote_only else ""
            return event.agent, f"run {event.run} · sees {seen}{only}"
        case ev.TextDelta() | ev.ReasoningDelta() | ev.FinalTextDelta():
            return None
        case _:
            assert_never(event)


def _tool_cell(event: groups.ToolActivity) -> tuple[str, str] | None:
    """A tool call is one row, when it finishes."""
    match event:
        case ev.ToolCallFinished():
            _, word = tool_outcome(event.ok, event.held)
            took = "" if event.held else f" {seconds_text(event.duration_s)}"
            final = " (final)" if event.phase == "presentation" else ""
            return event.agent, f"tool {event.name}{final}: {word}{took}"
        case ev.HostedToolUsed(activity=used):
            final = " (final)" if event.phase == "presentation" else ""
            what = f"{len(used.sources)} sources" if used.tool != "code_execution" else "ran"
            word = what if used.ok else "error"
            return event.agent, f"hosted {used.tool}{final}: {word}"
        case ev.SubagentFinished():
            took = seconds_text(event.duration_s)
            return event.agent, f"subagent {event.subagent}: {event.outcome} {took}"
        case ev.ToolSourceFailed():
            return event.agent, f"tool source {event.source} failed"
        case ev.AgentWarning():
            return event.agent, f"warning: {event.message}"
        case ev.PermissionDecided():
            return _permission_cell(event)
        case ev.ToolCallStarted() | ev.ToolCallProgress() | ev.SubagentStarted():
            return None
        case _:
            assert_never(event)


def _decision_text(event: groups.Decision) -> str:
    match event:
        case ev.AnswerPublished():
            files = files_text(event.files)
            return f"answer {event.label}" + (f" · {files}" if files else "")
        case ev.AnswerChecked():
            return check_line(event, 60)
        case ev.VoteCast():
            return f"vote → {event.target_label}"
        case ev.VoteInvalidated():
            return f"vote → {event.target_label} invalid (new {event.newer_label})"
        case ev.AgentRestarted():
            return f"restart: {_short(event.reason)}"
        case ev.ActionRejected():
            return f"rejected #{event.attempt}: {_short(event.reason)}"
        case ev.AgentFailed():
            return "stopped by the person" if event.stopped else f"FAILED: {_short(event.error)}"
        case _:
            assert_never(event)


def _aid_text(event: groups.AidActivity) -> str:
    match event:
        case ev.PersonaAssigned():
            return f"persona: {_short(event.summary or event.persona)}"
        case ev.CriteriaGenerated():
            return f"wrote {len(event.criteria)} evaluation criteria"
        case ev.QuestionParaphrased():
            return f"reads the question as: {_short(event.paraphrase)}"
        case ev.GeneratorFailed():
            return f"{event.what} not generated: {_short(event.error)}"
        case ev.BroadcastAsked():
            return f"asks {', '.join(event.to)}: {_short(event.question)}"
        case ev.BroadcastAnswered():
            said = _short(event.answer) if event.ok else f"no answer ({_short(event.answer)})"
            return f"{event.responder} answers: {said}"
        case _:
            assert_never(event)


def _progress_cell(event: groups.RunProgress) -> tuple[str, str] | None:
    """The presenter's steps; the rest of the run is drawn across the table, or after it."""
    match event:
        case ev.PresentationStarted():
            return event.agent, f"presents ({event.strategy})"
        case ev.EvaluationStarted():
            return event.agent, "evaluates the final answer"
        case ev.EvaluationFinished():
            verdict = "submitted" if event.submitted else "asks for a restart"
            return event.agent, f"{verdict} ({_short(event.note)})"
        case (
            ev.RunStarted()
            | ev.UsageReported()
            | ev.CoordinationFinished()
            | ev.OrchestrationRestarted()
            | ev.RunFinished()
        ):
            return None
        case _:
            assert_never(event)


def _footer(events: list[ev.AnyEvent]) -> list[str]:
    rows: list[str] = []
    for event in events:
        if isinstance(event, ev.CoordinationFinished):
            rows = _outcome_rows(event)
        elif isinstance(event, ev.RunFinished):
            rows.append(f"result: {event.outcome.status} · {_short(event.outcome.reason)}")
    return rows


def _outcome_rows(event: ev.CoordinationFinished) -> list[str]:
    winner = f"{event.winner} ({event.winner_label})" if event.winner else "none"
    ranked = sorted(event.tally.items(), key=lambda item: (-item[1], item[0]))
    tally = ", ".join(f"{label} = {n}" for label, n in ranked) or "no votes"
    rows = [f"winner: {winner}", f"tally: {tally}"]
    if event.tie_break:
        rows.append(f"tie-break: {event.tie_break}")
    rows.append(f"reason: {event.reason}")
    return rows


def _row(cells: list[str], col: int) -> list[str]:
    wrapped = [_wrap(cell, col, limit=MAX_CELL_LINES) for cell in cells]
    height = max(len(w) for w in wrapped)
    return [_line([w[i] if i < len(w) else "" for w in wrapped], col) for i in range(height)]


def _line(parts: list[str], col: int) -> str:
    # Empty cells at the right end are dropped so no line ends in a dangling separator.
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    return SEP.join(part.ljust(col) for part in parts).rstrip()


def _wrap(text: str, col: int, *, limit: int | None) -> list[str]:
    # Continuation lines are indented so each event's cell reads as one entry.
    lines = textwrap.wrap(text, col, subsequent_indent="  ", break_on_hyphens=False) or [""]
    if limit is not None and len(lines) > limit:
        rest = " ".join(line.strip() for line in lines[limit - 1 :])
        lines = [*lines[: limit - 1], _fit("  " + rest, col)]
    return lines


def _fit(text: str, col: int) -> str:
    return text if len(text) <= col else text[: col - 1] + "…"


def _middle(text: str, col: int) -> str:
    """Cut from the middle: ids in a team often share a prefix and differ at the end."""
    if len(text) <= col:
        return text
    head = (col - 1) // 2
    return text[:head] + "…" + text[len(text) - (col - 1 - head) :]


def _short(text: str) -> str:
    return preview(text, REASON_CHARS) or ""


def _permission_cell(event: ev.PermissionDecided) -> tuple[str, str] | None:
    """Refusals, and what an approver allowed; a rule's plain allow fills no cell."""
    if event.allowed and event.operator not in ("human", "policy"):
        return None
    verdict = f"allowed by {event.operator}" if event.allowed else "REFUSED"
    return event.agent, f"perm #{event.seq} {event.tool}: {verdict}"
