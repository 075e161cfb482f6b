"""One agent run: stream from the backend until a valid workflow action is accepted.

A run is a small state machine (`Step`): ask the model, then run its tools, correct its
action or tell it why a guard cut it, and ask again, until the board accepts its answer
or vote (or moves on). One function per step; `_TOOL_STEPS` and `_FREE_TEXT_STEPS` are
the two shapes of a run.

The loop lives here, not in the backends, so every backend gets the same bounds and
events: at most `max_tool_iterations` model calls that used other tools (the call after
the last of them is offered only the workflow tools, so it answers or votes), and at most
`max_invalid_retries` corrective messages for invalid actions.

The model is offered the workflow tools plus its toolbox's tools (or, writing JSON
actions, a `tool` action naming them). The other calls of one turn run concurrently
through `tool_round.run_round` (the toolbox is the only way to a tool) and their results
go back to the model (`turn_messages.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from massgen.backends.base import Backend
from massgen.backends.common import estimated_usage, request_chars
from massgen.coordination import actions, free_text, python_blocks
from massgen.coordination import turn_messages as turns
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


class Step(Enum):
    """Where one run of a member stands between model calls. A run starts at ASK and
    ends at DONE (its action accepted, or the board moved on) or raises AgentGaveUp:

        ASK ──reply cut by a guard──▶ GUARDED ──▶ ASK    (a second cut: gave up)
        ASK ──calls its own tools───▶ TOOLS ────▶ ASK    (too many rounds: gave up)
        ASK ──a workflow action─────▶ ACT ──accepted or stale──▶ DONE
                                      ACT ──invalid or refused─▶ CORRECT ──▶ ASK
                                                                 (too many: gave up)
    """

    ASK = "ask"
    GUARDED = "guarded"
    TOOLS = "tools"
    ACT = "act"
    CORRECT = "correct"
    DONE = "done"


@dataclass(slots=True)
class _Run:
    """The state one run carries from step to step."""

    member: Member
    setup: RunSetup
    submit: Submit
    emit: Emit
    messages: list[Message]
    same_calls: CallWatch  # its tool calls so far, to refuse runaway repeats
    own: tuple[ToolSpec, ...] = ()  # its own tools, still offered
    offered: tuple[ToolSpec, ...] = ()  # what the next call offers (workflow + own)
    schema: dict | None = None  # JSON actions: the schema the next reply is held to
    ctx: ToolContext | None = None
    sources: list[Source] = field(default_factory=list)  # what its hosted searches found
    invalid: int = 0
    tool_rounds: int = 0
    strikes: int = 0
    reply: _Reply = field(default_factory=_Reply)
    text: str = ""  # the reply's text as acted on (free text: with its real code output)
    action: actions.Action = field(default_factory=lambda: actions.Invalid(""))
    calls: list[ToolCall] = field(default_factory=list)  # this reply's calls to run as tools
    reason: str = ""  # why the action was not accepted
    verdict: Verdict = Verdict.STALE


async def run_agent(member: Member, setup: RunSetup, submit: Submit, emit: Emit) -> Verdict:
    """Drive one run to an accepted action (or a stale view). Raises AgentGaveUp or
    BackendError when the agent cannot finish."""
    if setup.free_text:
        run, steps = _free_text_start(member, setup, submit, emit), _FREE_TEXT_STEPS
    else:
        run, steps = _tool_start(member, setup, submit, emit), _TOOL_STEPS
    step = Step.ASK
    while step is not Step.DONE:
        step = await steps[step](run)
    return run.verdict


def _tool_start(member: Member, setup: RunSetup, submit: Submit, emit: Emit) -> _Run:
    """A run that answers through workflow tool calls (or JSON actions naming them)."""
    own = member_tools(member)
    structured = member.structured_actions
    system = f"{setup.system}\n\n{actions.tools_note(own)}" if structured and own else setup.system
    labels, can_answer = setup.vote_labels, setup.can_answer
    schema = None
    if structured:
        schema = actions.action_schema(labels, can_answer=can_answer, tools=own)
    return _Run(
        member,
        setup,
        submit,
        emit,
        messages=[
            Message("system", system),
            Message("user", setup.user, attachments=member.attachments),
        ],
        own=own,
        offered=(*actions.workflow_tools(labels, can_answer=can_answer), *own),
        schema=schema,
        ctx=ToolContext(member.id, "coordination", member.workspace, task=setup.user),
        same_calls=CallWatch(setup.guards.max_identical_tool_calls),
    )


def _free_text_start(member: Member, setup: RunSetup, submit: Submit, emit: Emit) -> _Run:
    """A run of a model without tool calling, written as free text that ends with a
    decision line (`free_text.py`); a short constrained call decides when it has none."""
    if setup.python_blocks:  # its imagined code output is never written: the real one is
        member = replace(member, params=python_blocks.stopping(member.params))
    # An empty system message is not the same request as none: chat templates put their
    # default system prompt in only when there is none (Qwen's does), and a first answer
    # must be asked exactly as a single call asks it.
    system = [Message("system", setup.system)] if setup.system else []
    messages = [*system, Message("user", setup.user, attachments=member.attachments)]
    same_calls = CallWatch(setup.guards.max_identical_tool_calls)  # it calls no tools
    return _Run(member, setup, submit, emit, messages, same_calls)


async def _ask(run: _Run) -> Step:
    """One model call with the conversation so far; what the reply asks for next."""
    reply = await _called(run, () if run.schema else run.offered, run.schema)
    if reply.stopped is not None:
        return Step.GUARDED
    run.sources += reply.sources
    structured = run.schema is not None
    run.action = turns.action_of(
        reply.text, reply.calls, structured=structured, tools=bool(run.own)
    )
    run.calls = turns.tool_calls(reply.calls, run.action, {spec.name for spec in run.own})
    return Step.TOOLS if run.calls else Step.ACT


async def _ask_free_text(run: _Run) -> Step:
    """One free-text call; its ```python blocks run, and its decision line (or a short
    constrained call) is its action."""
    reply = await _called(run, (), None)
    if reply.stopped is not None:
        return Step.GUARDED
    member, setup, text = run.member, run.setup, reply.text
    if setup.python_blocks and (code := python_blocks.code_of(text)):
        asking = _asking(member, run.messages, text, setup, run.emit)
        text = await python_blocks.finished(text, code, asking, run.emit, member.id)
    action = free_text.read_decision(text, setup.vote_labels, can_answer=setup.can_answer)
    if action is None:
        action = await _decision(member, run.messages, text, setup, run.emit)
    run.text, run.action = text, action
    return Step.ACT


async def _called(run: _Run, tools: tuple[ToolSpec, ...], schema: dict | None) -> _Reply:
    """The reply to the conversation, after the messages that arrived meanwhile."""
    if run.member.inbox is not None:
        run.messages += [Message("user", text) for text in run.member.inbox()]
    run.reply = await _call(run.member, run.messages, tools, schema, run.emit, run.setup.guards)
    run.text = run.reply.text
    return run.reply


async def _guarded(run: _Run) -> Step:
    """A guard cut the reply: it reads what it wrote and why (the second time, it fails)."""
    assert run.reply.stopped is not None
    run.strikes = _strike(run.member, run.reply.stopped, run.strikes, run.emit)
    run.messages += turns.cut_short(run.reply.text, run.reply.stopped)
    return Step.ASK


async def _tools(run: _Run) -> Step:
    """Its tool calls run (repeats are refused), and it reads their results."""
    run.tool_rounds += 1
    if run.tool_rounds > run.setup.max_tool_iterations:
        raise AgentGaveUp(f"no workflow action after {run.tool_rounds - 1} tool rounds")
    calls = run.calls
    repeats = {call.id: why for call in calls if (why := run.same_calls.repeats(call))}
    if repeats:
        run.strikes = _strike(run.member, next(iter(repeats.values())), run.strikes, run.emit)
    fresh = [call for call in calls if call.id not in repeats]
    assert run.ctx is not None
    results = await run_round(run.member.toolbox, fresh, run.ctx, run.setup.tools, run.emit)
    results += [ToolResult.error(c, corrective(repeats[c.id])) for c in calls if c.id in repeats]
    reply, structured = run.reply, run.schema is not None
    run.messages += turns.tool_messages(
        reply.text, reply.calls, calls, results, structured=structured
    )
    if run.tool_rounds == run.setup.max_tool_iterations and run.own:
        _last_round(run)
    return Step.ASK


def _last_round(run: _Run) -> None:
    """The last call allowed: only the workflow tools, so it answers or votes."""
    labels, can_answer = run.setup.vote_labels, run.setup.can_answer
    run.own = ()
    run.offered = actions.workflow_tools(labels, can_answer=can_answer)
    if run.schema is not None:
        run.schema = actions.action_schema(labels, can_answer=can_answer)
    run.messages.append(Message("user", turns.LAST_ROUND.format(n=run.tool_rounds)))


async def _act(run: _Run) -> Step:
    """Its workflow action goes to the board: accepted or stale ends the run."""
    action = run.action
    assert not isinstance(action, actions.UseTool)  # tools ran as tool calls, free text has none
    if isinstance(action, actions.NewAnswer) and run.sources:
        # Written as a tool argument, where providers put no citations.
        action = actions.NewAnswer(with_sources(action.content, run.sources))
    verdict = action if isinstance(action, actions.Invalid) else run.submit(action)
    if isinstance(verdict, Verdict):
        run.verdict = verdict
        return Step.DONE
    run.reason = verdict.reason
    return Step.CORRECT


async def _correct(run: _Run) -> Step:
    """An invalid or refused action: it is told why (too many times: it fails)."""
    _count_invalid(run)
    reply, structured = run.reply, run.schema is not None
    run.messages += turns.correction(reply.text, reply.calls, run.reason, structured=structured)
    return Step.ASK


async def _correct_free_text(run: _Run) -> Step:
    _count_invalid(run)
    run.messages += [Message("assistant", run.text), Message("user", run.reason)]
    return Step.ASK


def _count_invalid(run: _Run) -> None:
    run.invalid += 1
    run.emit(ev.ActionRejected(agent=run.member.id, reason=run.reason, attempt=run.invalid))
    if run.invalid > run.setup.max_invalid_retries:
        raise AgentGaveUp(f"no valid action after {run.invalid} attempts: {run.reason}")


_StepFn = Callable[[_Run], Awaitable[Step]]

_TOOL_STEPS: dict[Step, _StepFn] = {
    Step.ASK: _ask,
    Step.GUARDED: _guarded,
    Step.TOOLS: _tools,
    Step.ACT: _act,
    Step.CORRECT: _correct,
}
_FREE_TEXT_STEPS: dict[Step, _StepFn] = {
    **_TOOL_STEPS,
    Step.ASK: _ask_free_text,
    Step.CORRECT: _correct_free_text,
}


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
    return ev.HostedToolUsed(agent=member.id, activity=activity, phase=phase)


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
