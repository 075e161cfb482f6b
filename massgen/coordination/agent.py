"""One agent run: stream from the backend until a valid workflow action is accepted.

The loop lives here, not in the backends, so every backend gets the same bounds and
events: at most `max_tool_iterations` model calls that only used other tools, and at most
`max_invalid_retries` corrective messages for invalid actions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from massgen.backends.base import Backend
from massgen.backends.common import estimated_usage, request_chars
from massgen.coordination import actions
from massgen.core import events as ev
from massgen.core.errors import MassgenError
from massgen.core.types import (
    Finish,
    GenerationParams,
    Message,
    ReasoningChunk,
    Request,
    TextChunk,
    ToolCall,
    ToolSpec,
    Usage,
)
from massgen.tools.base import NoTools, Toolbox

Emit = Callable[[ev.AnyEvent], None]


@dataclass(frozen=True, slots=True)
class Member:
    """A team member as coordination sees it: an id, a backend and how to talk to it."""

    id: str
    backend: Backend
    params: GenerationParams = field(default_factory=GenerationParams)
    system_message: str | None = None
    voting_sensitivity: str | None = None
    structured_actions: bool = False
    # Dollars for a call's usage, or None when the model has no known price. Set by whoever
    # builds the team; coordination itself knows no providers or prices.
    price: Callable[[Usage], float | None] | None = None
    toolbox: Toolbox = field(default_factory=NoTools)


class Verdict(Enum):
    ACCEPTED = "accepted"
    STALE = "stale"  # the board moved on while the agent worked: restart with a fresh view


@dataclass(frozen=True, slots=True)
class Rejected:
    reason: str


Submit = Callable[[actions.NewAnswer | actions.CastVote], Verdict | Rejected]


class AgentGaveUp(MassgenError):
    """The agent used up its retries or tool iterations without a valid action."""


@dataclass(frozen=True, slots=True)
class RunSetup:
    system: str
    user: str
    vote_labels: list[str]
    can_answer: bool
    max_invalid_retries: int
    max_tool_iterations: int


@dataclass(slots=True)
class _Reply:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    streamed: bool = False  # the provider began answering (so it bills this call)
    reasoning_chars: int = 0


async def run_agent(member: Member, setup: RunSetup, submit: Submit, emit: Emit) -> Verdict:
    """Drive one run to an accepted action (or a stale view). Raises AgentGaveUp or
    BackendError when the agent cannot finish."""
    messages = [Message("system", setup.system), Message("user", setup.user)]
    tools = actions.workflow_tools(setup.vote_labels, can_answer=setup.can_answer)
    schema = None
    if member.structured_actions:
        schema = actions.action_schema(setup.vote_labels, can_answer=setup.can_answer)
    invalid, tool_rounds = 0, 0
    while True:
        reply = await _call(member, messages, () if schema else tools, schema, emit)
        action = _action_of(reply, structured=schema is not None)
        if isinstance(action, actions.Invalid) and _only_other_tools(reply):
            tool_rounds += 1
            if tool_rounds > setup.max_tool_iterations:
                raise AgentGaveUp(f"no workflow action after {tool_rounds - 1} tool rounds")
            messages += _unavailable_tools(reply)
            continue
        verdict = action if isinstance(action, actions.Invalid) else submit(action)
        if isinstance(verdict, Verdict):
            return verdict
        invalid += 1
        emit(ev.ActionRejected(agent=member.id, reason=verdict.reason, attempt=invalid))
        if invalid > setup.max_invalid_retries:
            raise AgentGaveUp(f"no valid action after {invalid} attempts: {verdict.reason}")
        messages += _correction(reply, verdict.reason, structured=schema is not None)


async def _call(
    member: Member,
    messages: list[Message],
    tools: tuple[ToolSpec, ...],
    schema: dict | None,
    emit: Emit,
) -> _Reply:
    request = Request(tuple(messages), tools, member.params, schema)
    reply = _Reply()
    try:
        async for item in member.backend.stream(request):
            reply.streamed = True
            match item:
                case TextChunk(text=text):
                    reply.text += text
                    emit(ev.TextDelta(agent=member.id, text=text))
                case ReasoningChunk(text=text):
                    reply.reasoning_chars += len(text)
                    emit(ev.ReasoningDelta(agent=member.id, text=text))
                case ToolCall():
                    reply.calls.append(item)
                case Usage():
                    reply.usage = reply.usage + item
                case Finish():
                    pass
    except asyncio.CancelledError:
        # Restarted (or stopped) mid-stream: providers bill what they read and wrote so far,
        # and report usage only at the end of a stream, so estimate it from the text.
        if reply.streamed and reply.usage == Usage():
            emit(usage_event(member, _partial_usage(request, reply)))
        raise
    emit(usage_event(member, reply.usage))
    return reply


def _partial_usage(request: Request, reply: _Reply) -> Usage:
    written = len(reply.text) + reply.reasoning_chars
    written += sum(len(call.arguments) + len(call.name) for call in reply.calls)
    return estimated_usage(request_chars(request), written)


def usage_event(member: Member, usage: Usage, phase: str = "coordination") -> ev.UsageReported:
    return ev.UsageReported(
        agent=member.id,
        usage=usage,
        cost_usd=member.price(usage) if member.price is not None else None,
        phase=phase,
    )


def _action_of(reply: _Reply, *, structured: bool) -> actions.Action:
    if structured and not reply.calls:
        return actions.parse_json_action(reply.text)
    return actions.parse_tool_calls(reply.calls)


def _only_other_tools(reply: _Reply) -> bool:
    return bool(reply.calls) and not any(c.name in actions.WORKFLOW_TOOLS for c in reply.calls)


def _unavailable_tools(reply: _Reply) -> list[Message]:
    """Every tool call needs a result; tools beyond the workflow ones do not exist yet."""
    results = [
        Message("tool", f"Error: tool `{call.name}` is not available.", tool_call_id=call.id)
        for call in reply.calls
    ]
    return [Message("assistant", reply.text, tuple(reply.calls)), *results]


def _correction(reply: _Reply, reason: str, *, structured: bool) -> list[Message]:
    if not reply.calls:
        note = reason if structured else f"{reason} Make sure you actually call the tool."
        return [Message("assistant", reply.text), Message("user", note)]
    results = [Message("tool", f"Error: {reason}", tool_call_id=call.id) for call in reply.calls]
    return [Message("assistant", reply.text, tuple(reply.calls)), *results]
