"""Post-evaluation and orchestration restarts (`coordination.max_orchestration_restarts`).

After the final presentation, while attempts remain, the winner reads the final answer in
a fresh conversation (`evaluation_messages`) and calls `submit(confirmed)` or
`restart_orchestration(reason, instructions)`. A restart runs the whole coordination
again with fresh agent states (`restart_cycle.py`); every agent's message of
the next attempt opens with the feedback (`feedback_block`).

An evaluation never loses an answer: no tool call, a provider error, the run's deadline
or its budget all mean the answer is submitted. The evaluator may use its tools to check
claims, for at most `max_tool_iterations` rounds, in the coordination phase: context
paths stay read-only and planning mode still holds back tools with side effects.
A model that writes JSON actions answers with a JSON object instead (`VERDICT_SCHEMA`).

`orchestrator.debug_final_answer` replaces the answer evaluated on attempt 1, to test a
restart on purpose (the predecessor's knob).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.config.schema import OrchestratorConfig
from massgen.coordination.agent import Emit, Member, hosted_event, member_tools, usage_event
from massgen.coordination.budget import BudgetSpent
from massgen.coordination.prompts import Turn, history_block
from massgen.coordination.quoting import quoted
from massgen.coordination.tool_round import ToolBounds, run_round
from massgen.core import events as ev
from massgen.core.errors import BackendError
from massgen.core.status import Status
from massgen.core.toolbox import ToolContext
from massgen.core.types import (
    HostedActivity,
    Message,
    ReasoningChunk,
    Request,
    TextChunk,
    ToolCall,
    ToolSpec,
    Usage,
)

SUBMIT = "submit"
RESTART = "restart_orchestration"
VERDICT_TOOLS = frozenset({SUBMIT, RESTART})


@dataclass(frozen=True, slots=True)
class Feedback:
    """Why attempt `attempt` was restarted, and the answer that was found wanting."""

    attempt: int
    reason: str
    instructions: str
    answer: str


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What the evaluator is given."""

    question: str
    answer: str
    attempt: int
    tools: ToolBounds
    max_tool_iterations: int
    workspace: Path | None = None  # where its tools work (the presenter's), else its own
    history: tuple[Turn, ...] = ()
    debug_override: bool = False


# --- when -------------------------------------------------------------------------------


def max_attempts(settings: OrchestratorConfig) -> int:
    return 1 + settings.coordination.max_orchestration_restarts


def due(settings: OrchestratorConfig, attempt: int, status: Status, winner: str | None) -> bool:
    """An evaluation follows this attempt: another may come after it, and the team
    finished with an answer (a fallback after a deadline or a budget is not evaluated:
    there is no time or money left for another attempt)."""
    return attempt < max_attempts(settings) and status.complete and winner is not None


def answer_to_evaluate(settings: OrchestratorConfig, attempt: int, answer: str) -> tuple[str, bool]:
    """(the answer, whether it is `debug_final_answer`)."""
    if attempt == 1 and settings.debug_final_answer:
        return settings.debug_final_answer, True
    return answer, False


def restarted_event(feedback: Feedback, most: int, agent: str) -> ev.OrchestrationRestarted:
    """The event that starts attempt `feedback.attempt + 1` of `most`, asked for by `agent`."""
    return ev.OrchestrationRestarted(
        attempt=feedback.attempt + 1,
        max_attempts=most,
        agent=agent,
        reason=feedback.reason,
        instructions=feedback.instructions,
        previous_answer=feedback.answer,
    )


# --- what the models read ----------------------------------------------------------------

EVALUATION_RULES = (
    "You have just presented a final answer to the user. Now evaluate, with a fresh eye, "
    "whether it fully and accurately addresses the ORIGINAL MESSAGE. Then decide with "
    "exactly one call:\n"
    "1. `submit` with confirmed=true when the answer addresses every part of the ORIGINAL "
    "MESSAGE, its claims are accurate, and it is ready for the user.\n"
    "2. `restart_orchestration` when the answer is incomplete, contains errors, or misses "
    'an important part of the task. Give a `reason` (what is wrong, e.g. "the task asked '
    'for two Beatles, but only John Lennon was described") and `instructions`: detailed, '
    'actionable guidance for the next attempt (e.g. "describe John Lennon AND Paul '
    'McCartney: birth year, role in the band, notable songs"). The team then starts over '
    "with your feedback.\n"
    "Be honest and thorough: a restart with clear instructions leads to a better result."
)

VERIFY_NOTE = (
    "Your tools are available: use them to check the answer (that the files it names exist "
    "and hold what it says, that its technical claims hold) before you decide."
)

JSON_NOTE = (
    'Reply with a JSON object only: {"action": "submit", "confirmed": true} or '
    '{"action": "restart_orchestration", "reason": "...", "instructions": "..."}.'
)


def evaluation_messages(member: Member, setup: Evaluation, *, tools: bool) -> list[Message]:
    identity = (member.system_message or "").strip()
    rules = [EVALUATION_RULES]
    if member.structured_actions:
        rules.append(JSON_NOTE)
    elif tools:
        rules += [VERIFY_NOTE, *member.notes]
    system = "\n\n".join(p for p in (identity, *rules) if p)
    parts = [history_block(setup.history)] if setup.history else []
    parts += [
        f"<ORIGINAL MESSAGE>\n{setup.question}\n<END OF ORIGINAL MESSAGE>",
        f"FINAL ANSWER TO EVALUATE:\n{quoted(setup.answer)}",
        "Review this answer carefully and determine if it fully addresses the original "
        "task. Then call either submit(confirmed=True) if the answer is satisfactory, or "
        "restart_orchestration(reason, instructions) if improvements are needed.",
    ]
    user = Message("user", "\n\n".join(parts), attachments=member.attachments)
    return [Message("system", system), user]


def feedback_block(feedback: Feedback, *, workspace: bool = False) -> str:
    """What opens every agent's message in the attempt after a restart."""
    parts = [
        "<PREVIOUS ATTEMPT FEEDBACK>",
        f"The previous orchestration attempt was restarted because:\n{quoted(feedback.reason)}",
        f"**Instructions for this attempt:**\n{quoted(feedback.instructions) or '(none given)'}",
    ]
    if feedback.answer:
        parts.append(
            f"**Previous attempt's winning answer (for reference):**\n{quoted(feedback.answer)}"
        )
    if workspace:
        parts.append("Your workspace still holds your files from the previous attempt.")
    parts.append(
        "Please address these specific issues in your coordination and final answer.\n"
        "<END OF PREVIOUS ATTEMPT FEEDBACK>"
    )
    return "\n\n".join(parts)


def verdict_tools() -> tuple[ToolSpec, ToolSpec]:
    submit = ToolSpec(
        SUBMIT,
        "Confirm that the final answer fully addresses the original task and submit it to "
        "the user. Use this when the answer is complete, accurate, and satisfactory.",
        {
            "type": "object",
            "properties": {
                "confirmed": {
                    "type": "boolean",
                    "description": "Set to true to confirm the answer is satisfactory",
                }
            },
            "required": ["confirmed"],
        },
    )
    restart = ToolSpec(
        RESTART,
        "Restart the orchestration process with specific guidance for improvement. Use "
        "this when the answer is incomplete, incorrect, or does not fully address the "
        "original task.",
        {
            "type": "object",
            "properties": {
                "reason": {
                    "type": "string",
                    "description": "Clear explanation of why the answer is insufficient",
                },
                "instructions": {
                    "type": "string",
                    "description": "Detailed, actionable guidance for agents on the next attempt",
                },
            },
            "required": ["reason", "instructions"],
        },
    )
    return submit, restart


VERDICT_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {
            "type": "object",
            "properties": {"action": {"const": SUBMIT}, "confirmed": {"type": "boolean"}},
            "required": ["action", "confirmed"],
        },
        {
            "type": "object",
            "properties": {
                "action": {"const": RESTART},
                "reason": {"type": "string"},
                "instructions": {"type": "string"},
            },
            "required": ["action", "reason", "instructions"],
        },
    ]
}


# --- the evaluation -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Submitted:
    note: str


async def evaluate(
    member: Member, setup: Evaluation, emit: Emit, deadline: float
) -> Feedback | None:
    """The winner's verdict on `setup.answer`: None to submit it, else the feedback for
    the next attempt. Never raises for the model's or the provider's failures."""
    emit(
        ev.EvaluationStarted(
            agent=member.id, attempt=setup.attempt, debug_override=setup.debug_override
        )
    )
    verdict: Feedback | _Submitted
    try:
        async with asyncio.timeout_at(deadline):
            verdict = await _converse(member, setup, emit)
    except TimeoutError:
        verdict = _Submitted("timed out")
    except (BackendError, BudgetSpent) as error:
        verdict = _Submitted(f"the evaluation failed ({error})")
    submitted = isinstance(verdict, _Submitted)
    note = verdict.note if isinstance(verdict, _Submitted) else f"restart: {verdict.reason}"
    emit(
        ev.EvaluationFinished(
            agent=member.id, attempt=setup.attempt, submitted=submitted, note=note
        )
    )
    return None if isinstance(verdict, _Submitted) else verdict


async def _converse(member: Member, setup: Evaluation, emit: Emit) -> Feedback | _Submitted:
    own = () if member.structured_actions else _own_tools(member)
    messages = evaluation_messages(member, setup, tools=bool(own))
    schema = VERDICT_SCHEMA if member.structured_actions else None
    ctx = ToolContext(
        member.id, "coordination", setup.workspace or member.workspace, task=messages[-1].content
    )
    for round_ in range(setup.max_tool_iterations + 1):
        # The last call allowed is offered only the verdict tools, so it decides.
        last = round_ == setup.max_tool_iterations
        offered = () if schema else (*verdict_tools(), *(() if last else own))
        text, calls = await _stream(member, messages, offered, schema, emit)
        verdict = _verdict(text, calls, structured=schema is not None, setup=setup)
        if verdict is not None:
            return verdict
        tools = [call for call in calls if call.name not in VERDICT_TOOLS]
        if not tools or last:
            return _Submitted("no tool call: submitted" if not tools else "no verdict: submitted")
        results = await run_round(member.toolbox, tools, ctx, setup.tools, emit)
        messages.append(Message("assistant", text, tuple(tools)))
        messages += [Message("tool", r.content, tool_call_id=r.call_id) for r in results]
    raise AssertionError("unreachable: the last round always decides")


def _own_tools(member: Member) -> tuple[ToolSpec, ...]:
    return tuple(s for s in member_tools(member) if s.name not in VERDICT_TOOLS)


def _verdict(
    text: str, calls: Sequence[ToolCall], *, structured: bool, setup: Evaluation
) -> Feedback | _Submitted | None:
    """The decision in this reply, or None when it only called other tools."""
    if structured:
        return _decided(_json_object(text), setup) or _Submitted("no verdict: submitted")
    for call in calls:
        if call.name in VERDICT_TOOLS:
            return _decided({**_json_object(call.arguments), "action": call.name}, setup)
    return None


def _decided(data: dict[str, Any], setup: Evaluation) -> Feedback | _Submitted | None:
    action = data.get("action")
    if action == SUBMIT:
        return _Submitted("confirmed" if data.get("confirmed", True) else "submitted unconfirmed")
    if action != RESTART:
        return None
    reason = _text(data.get("reason")) or "the answer needs improvement"
    return Feedback(setup.attempt, reason, _text(data.get("instructions")), setup.answer)


def _json_object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text.strip() or "{}")
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


async def _stream(
    member: Member,
    messages: list[Message],
    tools: tuple[ToolSpec, ...],
    schema: dict[str, Any] | None,
    emit: Emit,
) -> tuple[str, list[ToolCall]]:
    """One model call, streamed into the winner's pane: its text and its tool calls."""
    request = Request(tuple(messages), tools, member.params, schema, member.hosted)
    text, calls, usage = "", [], Usage()
    async for item in member.backend.stream(request):
        match item:
            case TextChunk():
                text += item.text
                emit(ev.TextDelta(agent=member.id, text=item.text))
            case ReasoningChunk():
                emit(ev.ReasoningDelta(agent=member.id, text=item.text))
            case ToolCall():
                calls.append(item)
            case HostedActivity():
                emit(hosted_event(member, item))
            case Usage():
                usage = usage + item
            case _:
                pass
    emit(usage_event(member, usage, phase="evaluation"))
    return text, calls
