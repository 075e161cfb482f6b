"""The final presentation: the winner writes the deliverable, or its answer is reused.

A presenter with tools may call them (phase "presentation": planning mode holds nothing
back here, so this is where a planned action runs, once). Each round of calls goes
through the same `tool_round.run_round` as in coordination; the last model call allowed
by `max_tool_iterations` is offered no tools, so the presentation always ends in text.
A model that writes JSON actions presents in plain text, without tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from massgen.coordination.agent import Emit, Member, hosted_event, member_tools, usage_event
from massgen.coordination.board import Answer
from massgen.coordination.prompts import PRESENTING_WITH_TOOLS, Turn, presentation_messages
from massgen.coordination.tool_round import ToolBounds, run_round
from massgen.coordination.winner import Decision
from massgen.core import events as ev
from massgen.core.toolbox import ToolContext
from massgen.core.types import (
    HostedActivity,
    Message,
    Request,
    TextChunk,
    ToolCall,
    ToolSpec,
    Usage,
)


async def present(
    member: Member,
    question: str,
    decision: Decision,
    answers: Sequence[Answer],
    *,
    strategy: str,
    emit: Emit,
    history: Sequence[Turn] = (),
    tools: ToolBounds | None = None,
    max_tool_iterations: int = 10,
    workspace: Path | None = None,
    may_restart: bool = False,
) -> str:
    """Stream the winner's final answer; fall back to its stored answer if it wrote none.
    `workspace`: where its tools work (the winner's snapshot, restored); default its own.
    `may_restart`: an evaluation follows (`PresentationStarted.may_restart`)."""
    winner = decision.winner
    assert winner is not None
    emit(ev.PresentationStarted(agent=member.id, strategy=strategy, may_restart=may_restart))
    system, user = presentation_messages(
        question,
        winner,
        answers,
        decision.reasons,
        identity=member.system_message,
        synthesize=strategy == "synthesize",
        history=history,
    )
    text = await deliver(
        member,
        system,
        user,
        PRESENTING_WITH_TOOLS,
        emit=emit,
        tools=tools,
        max_tool_iterations=max_tool_iterations,
        workspace=workspace,
    )
    return text or winner.content


async def deliver(
    member: Member,
    system: str,
    user: str,
    with_tools: str,
    *,
    emit: Emit,
    tools: ToolBounds | None = None,
    max_tool_iterations: int = 10,
    workspace: Path | None = None,
) -> str:
    """The presenter's calls, its tools running for real (phase "presentation"), until it
    writes text without tool calls; returns that text, stripped. `with_tools`: what the
    system prompt adds when the presenter has tools."""
    own = () if member.structured_actions else member_tools(member)
    if own:
        system = "\n\n".join([system, with_tools, *member.notes])
    messages = [Message("system", system), Message("user", user, attachments=member.attachments)]
    ctx = ToolContext(member.id, "presentation", workspace or member.workspace, task=user)
    for round_ in range(max_tool_iterations + 1):
        offered = own if round_ < max_tool_iterations else ()
        text, calls = await _stream(member, messages, offered, emit)
        if not calls or not offered:
            break
        results = await run_round(member.toolbox, calls, ctx, tools or ToolBounds(), emit)
        messages.append(Message("assistant", text, tuple(calls)))
        messages += [Message("tool", r.content, tool_call_id=r.call_id) for r in results]
    return text.strip()


async def _stream(
    member: Member, messages: list[Message], tools: tuple[ToolSpec, ...], emit: Emit
) -> tuple[str, list[ToolCall]]:
    """One model call: its text (streamed as final text) and the tool calls it made."""
    request = Request(
        tuple(messages), tools, member.params, hosted=member.hosted, file_stores=member.file_stores
    )
    text, calls, usage = "", [], Usage()
    async for item in member.backend.stream(request):
        if isinstance(item, TextChunk):
            text += item.text
            emit(ev.FinalTextDelta(agent=member.id, text=item.text))
        elif isinstance(item, ToolCall):
            calls.append(item)
        elif isinstance(item, HostedActivity):
            emit(hosted_event(member, item, phase="presentation"))
        elif isinstance(item, Usage):
            usage = usage + item
    emit(usage_event(member, usage, phase="presentation"))
    return text, calls
