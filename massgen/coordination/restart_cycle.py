"""The attempts of one run (`coordination.max_orchestration_restarts`): coordinate and
present; then, while attempts remain, the winner evaluates the final answer and may ask
for the whole coordination to start over. `restarts.py` is the evaluation itself (its
prompts, tools and verdict); this module is the cycle around it.

A restart is emitted before the orchestrator resets for the next attempt, so the journal
has it first. An interrupt while the final answer is evaluated keeps that answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from massgen.coordination.final_answer import Ended, Ending, fallback
from massgen.coordination.restarts import (
    Evaluation,
    Feedback,
    answer_to_evaluate,
    due,
    evaluate,
    max_attempts,
    restarted_event,
)
from massgen.coordination.run_state import TeamOutcome
from massgen.core.status import Status


class Attempts(Ending, Protocol):
    """What the cycle asks of the orchestrator."""

    async def attempt(self, deadline: float) -> Ended:
        """Coordinate (or present directly) until this attempt has a final answer."""
        ...

    def next_attempt(self, feedback: Feedback) -> None:
        """A fresh board and fresh agent states for the attempt after `feedback`'s."""
        ...


class RestartCycle:
    """One run's attempts, in order; `presented`: the current attempt's outcome while its
    final answer is evaluated."""

    def __init__(self, run: Attempts) -> None:
        self.run = run
        self.presented: TeamOutcome | None = None

    async def final(self, deadline: float) -> TeamOutcome:
        """Attempts until no evaluation follows or the evaluation lets the answer stand."""
        while True:
            ended = await self.run.attempt(deadline)
            self.presented = ended.outcome
            feedback = await self._evaluated(ended, deadline)
            if feedback is None:
                return ended.outcome
            self._restart(ended.outcome, feedback)

    def interrupted(self) -> TeamOutcome:
        """The run's outcome when the user interrupts it: the answer under evaluation,
        else the best on the board."""
        if self.presented is None:
            return fallback(self.run, Status.INTERRUPTED, "interrupted by the user")
        reason = "interrupted by the user while the final answer was evaluated"
        return replace(self.presented, status=Status.INTERRUPTED, reason=reason)

    async def _evaluated(self, ended: Ended, deadline: float) -> Feedback | None:
        """None: the final answer stands. Else why the coordination must start over."""
        run, outcome = self.run, ended.outcome
        attempt = run.state.attempt
        if not due(run.settings, attempt, outcome.status, outcome.winner):
            return None
        member = next(m for m in run.members if m.id == outcome.winner)
        answer, override = answer_to_evaluate(run.settings, attempt, outcome.answer)
        setup = Evaluation(
            question=run.state.question,
            answer=answer,
            attempt=attempt,
            tools=run.tool_bounds(),
            max_tool_iterations=run.settings.max_tool_iterations,
            workspace=ended.workspace,
            history=run.state.history,
            debug_override=override,
        )
        return await evaluate(member, setup, run.emit, deadline)

    def _restart(self, outcome: TeamOutcome, feedback: Feedback) -> None:
        self.run.emit(
            restarted_event(feedback, max_attempts(self.run.settings), outcome.winner or "")
        )
        self.presented = None
        self.run.next_attempt(feedback)
