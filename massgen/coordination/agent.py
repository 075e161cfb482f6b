"""One agent run: stream from the backend until a valid workflow action is accepted.

The loop lives here, not in the backends, so every backend gets the same bounds and
events: at most `max_tool_iterations` model calls that used other tools (the call after
the last of them is offered only the workflow tools, so it answers or votes), and at most
`max_invalid_retries` corrective messages for invalid actions.

The model is offered the workflow tools plus its toolbox's tools (or, writing JSON
actions, a `tool` action naming them). The other calls of one turn run concurrently
through `tool_round.run_round` (the toolbox is the only way to a tool) and their results
go back to the model. A turn that calls a tool *and* a workflow tool: the tools run, and
the workflow call is answered "not accepted yet", since it was decided before the model
read their results; it calls it again next turn. Calls to tools it does not have beside a
workflow call are ignored, as they always were.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from massgen.backends.base import Backend
from massgen.backends.common import estimated_usage, request_chars
from massgen.coordination import actions, free_text, python_blocks
from massgen.coordination.runaway import CallWatch, Guards, ReplyWatch, corrective
from massgen.coordination.tool_round import ToolBounds, run_round
from massgen.core import events as ev
from massgen.core.citations import with_sources
from massgen.core.errors import MassgenError
from massgen.core.toolbox import NoTools, Toolbox, ToolContext, ToolResult
from massgen.core.types import (
    Attachment,
    BackendEvent,
    Finish,
    GenerationParams,
    HostedActivity,
    HostedTool,
    Message,
    ReasoningChunk,
    Request,
    Source,
    TextChunk,
    ToolCall,
    ToolSpec,
    Usage,
)

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
    # Every tool it may call besides the workflow ones; set by whoever builds the team.
    toolbox: Toolbox = field(default_factory=NoTools)
    # Its working directory (`massgen/workspace/`), handed to its tools; None: it has none.
    workspace: Path | None = None
    # Provider-hosted tools (web search, code execution) switched on for every call.
    hosted: tuple[HostedTool, ...] = ()
    # The provider-side stores its `file_search` reads (`massgen/uploads.py`).
    file_stores: tuple[str, ...] = ()
    # Media on the task's user message of each of its requests (`massgen/media.py`).
    attachments: tuple[Attachment, ...] = ()
    # Paragraphs added to its system prompts by whoever equips it (the permission note).
    notes: tuple[str, ...] = ()
    # Messages for it that arrived meanwhile (answers to its `ask_others` questions), read
    # before each of its model calls; None: it gets none.
    inbox: Callable[[], tuple[str, ...]] | None = None


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
    tools: ToolBounds = field(default_factory=ToolBounds)
    guards: Guards = field(default_factory=Guards)
    # The turn is written as free text with a decision line (`free_text.py`).
    free_text: bool = False
    # Its ```python blocks run and it reads their real output (`python_blocks.py`).
    python_blocks: bool = False


@dataclass(slots=True)
class _Reply:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    streamed: bool = False  # the provider began answering (so it bills this call)
    reasoning_chars: int = 0
    stopped: str | None = None  # a runaway guard ended it early: why
    sources: list[Source] = field(default_factory=list)  # what hosted searches found


async def run_agent(member: Member, setup: RunSetup, submit: Submit, emit: Emit) -> Verdict:
    """Drive one run to an accepted action (or a stale view). Raises AgentGaveUp or
    BackendError when the agent cannot finish."""
    if setup.free_text:
        return await _free_text_run(member, setup, submit, emit)
    own = member_tools(member)
    structured = member.structured_actions
    system = f"{setup.system}\n\n{actions.tools_note(own)}" if structured and own else setup.system
    messages = [
        Message("system", system),
        Message("user", setup.user, attachments=member.attachments),
    ]
    offered = (*actions.workflow_tools(setup.vote_labels, can_answer=setup.can_answer), *own)
    schema = None
    if structured:
        schema = actions.action_schema(setup.vote_labels, can_answer=setup.can_answer, tools=own)
    ctx = ToolContext(member.id, "coordination", member.workspace, task=setup.user)
    invalid, tool_rounds, strikes = 0, 0, 0
    same_calls = CallWatch(setup.guards.max_identical_tool_calls)
    sources: list[Source] = []  # what this run's hosted searches found
    while True:
        if member.inbox is not None:
            messages += [Message("user", text) for text in member.inbox()]
        tools = () if schema else offered
        reply = await _call(member, messages, tools, schema, emit, setup.guards)
        sources += reply.sources
        if reply.stopped is not None:
            strikes = _strike(member, reply.stopped, strikes, emit)
            messages += [Message("assistant", reply.text[:_KEPT_CHARS]), _told(reply.stopped)]
            continue
        action = _action_of(reply, structured=schema is not None, tools=bool(own))
        calls = _tool_calls(reply, action, {spec.name for spec in own})
        if calls:
            tool_rounds += 1
            if tool_rounds > setup.max_tool_iterations:
                raise AgentGaveUp(f"no workflow action after {tool_rounds - 1} tool rounds")
            repeats = {call.id: why for call in calls if (why := same_calls.repeats(call))}
            if repeats:
                strikes = _strike(member, next(iter(repeats.values())), strikes, emit)
            fresh = [call for call in calls if call.id not in repeats]
            results = await run_round(member.toolbox, fresh, ctx, setup.tools, emit)
            results += [
                ToolResult.error(c, corrective(repeats[c.id])) for c in calls if c.id in repeats
            ]
            messages += _tool_messages(reply, calls, results, structured=schema is not None)
            if tool_rounds == setup.max_tool_iterations and own:
                # The last call allowed: only the workflow tools, so it answers or votes.
                own = ()
                offered = actions.workflow_tools(setup.vote_labels, can_answer=setup.can_answer)
                if schema is not None:
                    schema = actions.action_schema(setup.vote_labels, can_answer=setup.can_answer)
                messages.append(Message("user", LAST_ROUND.format(n=tool_rounds)))
            continue
        assert not isinstance(action, actions.UseTool)  # it ran as a tool call above
        if isinstance(action, actions.NewAnswer) and sources:
            # Written as a tool argument, where providers put no citations.
            action = actions.NewAnswer(with_sources(action.content, sources))
        verdict = action if isinstance(action, actions.Invalid) else submit(action)
        if isinstance(verdict, Verdict):
            return verdict
        invalid += 1
        emit(ev.ActionRejected(agent=member.id, reason=verdict.reason, attempt=invalid))
        if invalid > setup.max_invalid_retries:
            raise AgentGaveUp(f"no valid action after {invalid} attempts: {verdict.reason}")
        messages += _correction(reply, verdict.reason, structured=schema is not None)


# Of a reply stopped by a guard, what the model reads back before the correction.
_KEPT_CHARS = 2000


async def _free_text_run(member: Member, setup: RunSetup, submit: Submit, emit: Emit) -> Verdict:
    """A run of a model without tool calling, written as free text that ends with a
    decision line (`free_text.py`); a short constrained call decides when it has none."""
    messages = [
        Message("system", setup.system),
        Message("user", setup.user, attachments=member.attachments),
    ]
    if setup.python_blocks:  # its imagined code output is never written: the real one is
        member = replace(member, params=python_blocks.stopping(member.params))
    invalid, strikes = 0, 0
    while True:
        if member.inbox is not None:
            messages += [Message("user", text) for text in member.inbox()]
        reply = await _call(member, messages, (), None, emit, setup.guards)
        if reply.stopped is not None:
            strikes = _strike(member, reply.stopped, strikes, emit)
            messages += [Message("assistant", reply.text[:_KEPT_CHARS]), _told(reply.stopped)]
            continue
        text = reply.text
        if setup.python_blocks and (code := python_blocks.code_of(text)):
            text = await python_blocks.finished(
                text, code, _asking(member, messages, text, setup, emit), emit, member.id
            )
        labels, can_answer = setup.vote_labels, setup.can_answer
        action = free_text.read_decision(text, labels, can_answer=can_answer)
        if action is None:
            action = await _decision(member, messages, text, setup, emit)
        assert not isinstance(action, actions.UseTool)  # free text calls no tools
        verdict = action if isinstance(action, actions.Invalid) else submit(action)
        if isinstance(verdict, Verdict):
            return verdict
        invalid += 1
        emit(ev.ActionRejected(agent=member.id, reason=verdict.reason, attempt=invalid))
        if invalid > setup.max_invalid_retries:
            raise AgentGaveUp(f"no valid action after {invalid} attempts: {verdict.reason}")
        messages += [Message("assistant", text), Message("user", verdict.reason)]


def _asking(
    member: Member, messages: list[Message], text: str, setup: RunSetup, emit: Emit
) -> python_blocks.Ask:
    """One more call of the same turn, after its first reply and a user message."""

    async def ask(note: str) -> str:
        asked = [*messages, Message("assistant", text), Message("user", note)]
        return (await _call(member, asked, (), None, emit, setup.guards)).text

    return ask


async def _decision(
    member: Member, messages: list[Message], text: str, setup: RunSetup, emit: Emit
) -> actions.Action:
    """The action a free-text turn left unstated, picked by one call held to a small JSON
    schema; `text` stays the answer or the vote's reason. Its JSON is not shown as the
    agent's text (the accepted action is), but its usage counts."""
    can_answer = setup.can_answer
    schema = free_text.decision_schema(setup.vote_labels, can_answer=can_answer)
    asked = [
        *messages,
        Message("assistant", text),
        Message("user", free_text.decision_prompt(can_answer=can_answer)),
    ]
    quiet: Emit = lambda event: None if isinstance(event, ev.TextDelta) else emit(event)  # noqa: E731
    reply = await _call(member, asked, (), schema, quiet, setup.guards)
    return free_text.decided(reply.text, text)


def _strike(member: Member, reason: str, strikes: int, emit: Emit) -> int:
    """A guard stopped the agent: the first time it is told why, the second it has failed
    for this turn (AgentGaveUp)."""
    strikes += 1
    emit(ev.ActionRejected(agent=member.id, reason=f"stopped: {reason}", attempt=strikes))
    if strikes > 1:
        raise AgentGaveUp(f"stopped: {reason}")
    return strikes


def _told(reason: str) -> Message:
    return Message("user", corrective(reason))


def member_tools(member: Member) -> tuple[ToolSpec, ...]:
    """The member's own tools; a tool named like a workflow tool is never offered."""
    return tuple(s for s in member.toolbox.specs() if s.name not in actions.WORKFLOW_TOOLS)


async def _call(
    member: Member,
    messages: list[Message],
    tools: tuple[ToolSpec, ...],
    schema: dict | None,
    emit: Emit,
    guards: Guards | None = None,
) -> _Reply:
    request = Request(
        tuple(messages), tools, member.params, schema, member.hosted, member.file_stores
    )
    reply = _Reply()
    watch = ReplyWatch(guards or Guards())
    try:
        await _read(member.backend.stream(request), reply, watch, member, emit)
    except asyncio.CancelledError:
        # Restarted (or stopped) mid-stream: providers bill what they read and wrote so far,
        # and report usage only at the end of a stream, so estimate it from the text.
        if reply.streamed and reply.usage == Usage():
            emit(usage_event(member, _partial_usage(request, reply)))
        raise
    if reply.stopped is not None and reply.usage == Usage():  # cut before the provider's count
        reply.usage = _partial_usage(request, reply)
    emit(usage_event(member, reply.usage))
    return reply


async def _read(
    stream: AsyncIterator[BackendEvent],
    reply: _Reply,
    watch: ReplyWatch,
    member: Member,
    emit: Emit,
) -> None:
    """Fold `stream` into `reply` until it ends, or until a runaway guard stops it (then
    the stream is closed at once, so the provider stops writing)."""
    try:
        async for item in stream:
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
                case HostedActivity():
                    reply.sources += item.sources
                    emit(hosted_event(member, item))
                case Usage():
                    reply.usage = reply.usage + item
                case Finish():
                    pass
            reply.stopped = watch.stop(reply.text, reply.reasoning_chars, bool(reply.calls))
            if reply.stopped is not None:
                return
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def hosted_event(
    member: Member, activity: HostedActivity, phase: str = "coordination"
) -> ev.HostedToolUsed:
    return ev.HostedToolUsed(
        agent=member.id,
        call_id=activity.id,
        tool=activity.tool,
        query=activity.query,
        sources=activity.sources,
        code=activity.code,
        output=activity.output,
        ok=activity.ok,
        phase=phase,
    )


def _partial_usage(request: Request, reply: _Reply) -> Usage:
    written = len(reply.text) + reply.reasoning_chars
    written += sum(len(call.arguments) + len(call.name) for call in reply.calls)
    return estimated_usage(request_chars(request), written)


def usage_event(member: Member, usage: Usage, phase: str = "coordination") -> ev.UsageReported:
    """The usage of one call, with its cost: the provider's own bill where it sent one,
    else the member's price table."""
    cost = usage.billed_usd
    if cost is None and member.price is not None:
        cost = member.price(usage)
    return ev.UsageReported(agent=member.id, usage=usage, cost_usd=cost, phase=phase)


def _action_of(reply: _Reply, *, structured: bool, tools: bool) -> actions.Action:
    if structured and not reply.calls:
        return actions.parse_json_action(reply.text, tools=tools)
    return actions.parse_tool_calls(reply.calls)


def _tool_calls(reply: _Reply, action: actions.Action, own: set[str]) -> list[ToolCall]:
    """The calls of this turn to run as tools (none: the turn is a workflow action)."""
    if isinstance(action, actions.UseTool):
        return [action.call(f"json_{uuid.uuid4().hex[:12]}")]
    others = [c for c in reply.calls if c.name not in actions.WORKFLOW_TOOLS]
    if len(others) == len(reply.calls):
        return others  # unknown names too: the toolbox answers "not available"
    return others if any(c.name in own for c in others) else []


LAST_ROUND = (
    "You have used all {n} tool rounds of this turn; no more tools. Finish now with the "
    "workflow action: your answer or your vote."
)

_NOT_YET = (
    "Not accepted: you called other tools in the same turn, so this was decided before "
    "you read their results. Read them, then call `{name}` again."
)


def _tool_messages(
    reply: _Reply, calls: list[ToolCall], results: list[ToolResult], *, structured: bool
) -> list[Message]:
    """The turn and its results as the model reads them next. A JSON-action model has no
    tool calls on the wire, so its results come back as a user message."""
    if structured and not reply.calls:
        (call,), (result,) = calls, results
        note = (
            f"Result of tool `{call.name}`:\n{result.content}\n\nReply with your next JSON action."
        )
        return [Message("assistant", reply.text), Message("user", note)]
    by_id = {result.call_id: result.content for result in results}
    answers = [
        Message("tool", by_id.get(call.id, _NOT_YET.format(name=call.name)), tool_call_id=call.id)
        for call in reply.calls
    ]
    return [Message("assistant", reply.text, tuple(reply.calls)), *answers]


def _correction(reply: _Reply, reason: str, *, structured: bool) -> list[Message]:
    if not reply.calls:
        note = reason if structured else f"{reason} Make sure you actually call the tool."
        return [Message("assistant", reply.text), Message("user", note)]
    results = [Message("tool", f"Error: {reason}", tool_call_id=call.id) for call in reply.calls]
    return [Message("assistant", reply.text, tuple(reply.calls)), *results]
