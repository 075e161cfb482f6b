"""Checked answers win: every candidate is checked once, as it is published.

The check runs at publish, in a task of its own, not in the author's run: the answer is
on the board (and its files snapshotted) before it starts, so a peer's newer answer
cannot cancel the check with the run that wrote it, and the check reads exactly the
files its peers will. While any check is running no agent starts a run and the team
does not finish (`Orchestrator._agent_loop`, `_check_done`), so every prompt shows each
answer with its verdict, every vote is cast on checked answers, and agreement is judged
knowing which answers failed. Checks are bounded by the verifier's timeout; a run's
deadline cancels those in flight, and an answer left without a verdict ranks as
unchecked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from massgen.coordination.board import Answer
from massgen.core import events as ev
from massgen.core.checks import Check, rank, unchecked

Emit = Callable[[ev.AnyEvent], None]


class Verifier(Protocol):
    """The run's `verifier:` (`massgen/verifiers/team.py`). `label`: the published answer
    whose workspace snapshot the check reads; `workspace`: a directory instead (the
    presenter's). Never raises for a check that could not be made: that is `unchecked`."""

    async def check(
        self,
        answer: str,
        question: str,
        *,
        label: str | None = None,
        workspace: Path | None = None,
    ) -> Check: ...


def checked_event(agent: str, label: str, check: Check, phase: str) -> ev.AnswerChecked:
    return ev.AnswerChecked(
        agent=agent,
        label=label,
        verdict=str(check.verdict),
        note=check.note,
        excerpt=check.excerpt,
        duration_s=check.seconds,
        phase=phase,
    )


class Checking:
    """The checks of one coordination attempt: `verdicts` by answer label."""

    def __init__(self, verifier: Verifier, question: str, emit: Emit, settled: Callable[[], None]):
        """`settled`: called after each check is recorded (wake the waiting agents)."""
        self.verifier = verifier
        self.question = question
        self.verdicts: dict[str, Check] = {}
        self._emit = emit
        self._settled = settled
        self._tasks: dict[str, asyncio.Task[None]] = {}

    @property
    def pending(self) -> bool:
        return bool(self._tasks)

    def start(self, answer: Answer) -> None:
        task = asyncio.get_running_loop().create_task(self._check(answer))
        self._tasks[answer.label] = task

    def catch_up(self, answers: Sequence[Answer]) -> None:
        """Check the answers that have no verdict (a resumed run: its journal had none)."""
        for answer in answers:
            if answer.label not in self.verdicts and answer.label not in self._tasks:
                self.start(answer)

    async def presented(
        self, winner: Answer, text: str, workspace: Path | None
    ) -> tuple[str, Check, str | None]:
        """The final answer after checking the presentation's `text`: (the text to give,
        its check, and why the selected answer's text replaced it, or None)."""
        check = await self.verifier.check(text, self.question, workspace=workspace)
        self._emit(checked_event(winner.agent, winner.label, check, "presentation"))
        selected = self.verdicts.get(winner.label)
        if keeps_presented(selected, check):
            return text, check, None
        was = selected.describe() if selected else "unchecked"
        why = (
            f"the presented answer did not pass its check ({check.describe()}), so the final "
            f"answer is the selected answer {winner.label} as it was checked ({was})"
        )
        return winner.content, selected or check, why

    async def _check(self, answer: Answer) -> None:
        try:
            check = await self.verifier.check(answer.content, self.question, label=answer.label)
        except Exception as error:  # a verifier's bug must not end the team's run
            check = unchecked(f"the verifier failed: {type(error).__name__}: {error}")
        self.verdicts[answer.label] = check
        self._tasks.pop(answer.label, None)
        self._emit(checked_event(answer.agent, answer.label, check, "coordination"))
        self._settled()

    async def stop(self) -> None:
        """Cancel the checks still running (the attempt ended: deadline, budget)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()


def failed_labels(verdicts: Mapping[str, Check]) -> frozenset[str]:
    return frozenset(label for label, check in verdicts.items() if check.verdict == "failed")


def best_checked(answers: Sequence[Answer], verdicts: Mapping[str, Check] | None) -> list[Answer]:
    """The answers whose check ranks best, in order (all of them without a verifier)."""
    if verdicts is None or not answers:
        return list(answers)
    best = min(rank(verdicts.get(a.label)) for a in answers)
    return [a for a in answers if rank(verdicts.get(a.label)) == best]


def keeps_presented(selected: Check | None, presented: Check) -> bool:
    """The presented rewrite stands unless it ranks below the selected answer's check: a
    passing answer is never replaced by a rewrite that failed or could not be checked."""
    return rank(presented) <= rank(selected)
