"""`orchestrator.skip_coordination_rounds`: a debugging mode for the final presentation.

No coordination rounds run and nothing is voted on: the first agent of the team answers
the question at once, as the final presenter. Its tools run for real (phase
"presentation"), so it may write where the user made a context path writable, as any
presenter may (after the permission engine's approval). The run's answer is what it
writes. The predecessor's key did the same: it picked the first agent and went straight
to the final presentation. With `coordination.max_orchestration_restarts`, the
presenter's evaluation of its answer may restart the run: it presents again, told why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from massgen.coordination.agent import Emit, Member
from massgen.coordination.budget import BudgetSpent
from massgen.coordination.presentation import deliver
from massgen.coordination.prompts import Turn, history_block
from massgen.coordination.tool_round import ToolBounds
from massgen.core import events as ev
from massgen.core.errors import BackendError
from massgen.core.status import Status

STRATEGY = "skip_coordination"  # PresentationStarted.strategy
REASON = "coordination skipped (`skip_coordination_rounds`): the first agent presents"

_RULES = (
    "Answer the user's message directly: you are the one who writes the final answer. "
    "Reply with the final answer only, in Markdown."
)
_WITH_TOOLS = (
    "Your tools run for real: use them where the message asks for actions or files "
    "(you may write to the user's context paths where they allowed it), check their "
    "results, then write the final answer, saying what was done."
)


@dataclass(frozen=True, slots=True)
class Setup:
    """What the presentation works with. `feedback`: why an evaluation restarted the run
    (`restarts.feedback_block`); `may_restart`: an evaluation follows
    (`PresentationStarted.may_restart`). `workspace`: where its tools work (default its
    own)."""

    question: str
    history: Sequence[Turn] = ()
    tools: ToolBounds | None = None
    max_tool_iterations: int = 10
    workspace: Path | None = None
    feedback: str | None = None
    may_restart: bool = False


@dataclass(frozen=True, slots=True)
class Presented:
    answer: str
    status: Status
    reason: str
    error: BackendError | None = None  # the presenter's provider failed


def skipped(agent: str, label: str) -> ev.CoordinationFinished:
    """What the run records in place of coordination: `agent` presents."""
    return ev.CoordinationFinished(winner=agent, winner_label=label, tally={}, reason=REASON)


async def present_first(member: Member, setup: Setup, emit: Emit, deadline: float) -> Presented:
    """`member`'s presentation, bounded by `deadline`, and how the run ends with it."""
    try:
        async with asyncio.timeout_at(deadline):
            answer = await answer_directly(member, setup, emit)
    except TimeoutError:
        return Presented(
            "", Status.TIMEOUT, "the deadline was reached while the first agent presented"
        )
    except BudgetSpent as spent:
        return Presented("", Status.BUDGET, spent.reason)
    except BackendError as error:
        return Presented("", Status.FAILED, f"the first agent failed: {error}", error)
    if not answer:
        return Presented("", Status.FAILED, "the first agent wrote no answer")
    return Presented(answer, Status.OK, REASON)


async def answer_directly(member: Member, setup: Setup, emit: Emit) -> str:
    """Stream `member`'s answer to the question as the final presentation; "" if it
    wrote none.

    Raises:
        BackendError: its provider failed.
    """
    emit(ev.PresentationStarted(agent=member.id, strategy=STRATEGY, may_restart=setup.may_restart))
    identity = (member.system_message or "").strip()
    system = "\n\n".join(p for p in (identity, _RULES) if p)
    parts = [setup.feedback] if setup.feedback else []
    if setup.history:
        parts.append(history_block(setup.history))
    parts.append(f"<ORIGINAL MESSAGE>\n{setup.question}\n<END OF ORIGINAL MESSAGE>")
    return await deliver(
        member,
        system,
        "\n\n".join(parts),
        _WITH_TOOLS,
        emit=emit,
        tools=setup.tools,
        max_tool_iterations=setup.max_tool_iterations,
        workspace=setup.workspace,
    )
