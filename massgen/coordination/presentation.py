"""The final presentation: the winner writes the deliverable, or its answer is reused."""

from __future__ import annotations

from collections.abc import Sequence

from massgen.coordination.agent import Emit, Member, usage_event
from massgen.coordination.board import Answer
from massgen.coordination.prompts import Turn, presentation_messages
from massgen.coordination.winner import Decision
from massgen.core import events as ev
from massgen.core.types import Message, Request, TextChunk, Usage


async def present(
    member: Member,
    question: str,
    decision: Decision,
    answers: Sequence[Answer],
    *,
    strategy: str,
    emit: Emit,
    history: Sequence[Turn] = (),
) -> str:
    """Stream the winner's final answer; fall back to its stored answer if it wrote none."""
    winner = decision.winner
    assert winner is not None
    emit(ev.PresentationStarted(agent=member.id, strategy=strategy))
    system, user = presentation_messages(
        question,
        winner,
        answers,
        decision.reasons,
        identity=member.system_message,
        synthesize=strategy == "synthesize",
        history=history,
    )
    request = Request((Message("system", system), Message("user", user)), (), member.params)
    text, usage = "", Usage()
    async for item in member.backend.stream(request):
        if isinstance(item, TextChunk):
            text += item.text
            emit(ev.FinalTextDelta(agent=member.id, text=item.text))
        elif isinstance(item, Usage):
            usage = usage + item
    emit(usage_event(member, usage, phase="presentation"))
    return text.strip() or winner.content
