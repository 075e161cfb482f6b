"""How one coordination attempt ends in a final answer, and the `TeamOutcome` it makes.

The decided board (`winner.decide`) is announced (`CoordinationFinished`); the winner
presents (`presentation.present`) unless no presentation call follows (`presents`); with
a verifier the presented text is checked, and the selected answer's text put back when
it does worse (`checks.py`). With `skip_coordination_rounds` the first agent presents at
once (`direct.py`). A deadline, the budget or the presenter's provider failing keep the
selected answer as written; an attempt cut short before its decision ends with the best
answer on the board (`fallback`). Every way out builds its outcome in `outcome`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from massgen.config.schema import OrchestratorConfig
from massgen.coordination import direct
from massgen.coordination.agent import Member
from massgen.coordination.agreement import Agreement
from massgen.coordination.board import Answer
from massgen.coordination.budget import BudgetSpent
from massgen.coordination.checks import best_checked
from massgen.coordination.presentation import present
from massgen.coordination.ranking import Ranked
from massgen.coordination.restarts import feedback_block, max_attempts
from massgen.coordination.run_state import Orchestrated, TeamOutcome
from massgen.coordination.stopping import STOPPED
from massgen.coordination.winner import Decision, decide
from massgen.core import events as ev
from massgen.core.checks import Check
from massgen.core.errors import BackendError
from massgen.core.status import Status


class Ending(Orchestrated, Protocol):
    """What the end of an attempt also asks of the orchestrator."""

    def agreement(self) -> Agreement | None:
        """How this attempt's first answers agree, whether or not that ended it."""
        ...

    def fail(self, agent: str, error: Exception) -> None: ...


@dataclass(frozen=True, slots=True)
class Ended:
    """An attempt's outcome, and the workspace its presenter worked in (the evaluation's
    tools work there too, `restarts.py`); None when no presenter had one."""

    outcome: TeamOutcome
    workspace: Path | None = None


def presents(settings: OrchestratorConfig, members: int) -> bool:
    """A final presentation call follows coordination. Planning mode needs one to run
    what it held back; without one (a single agent, `winner_reuse`,
    `skip_final_presentation`) it holds nothing back."""
    reuse = settings.final_answer_strategy == "winner_reuse"
    return members > 1 and not (reuse or settings.skip_final_presentation)


async def decided(run: Ending, deadline: float) -> Ended:
    """The board decides and its winner presents, by `deadline`."""
    decision = decide(run.state.board, run.settings.self_votes, run.verdicts())
    if decision.winner is None:
        announce(run, decision, "all agents failed")
        return Ended(outcome(run, decision, "", Status.FAILED, "all agents failed"))
    announce(run, decision, consensus_reason(run))
    if not presents(run.settings, len(run.members)):
        return Ended(await _final(run, decision, decision.winner.content, None))
    member, workspace = _presenter(run, decision.winner)
    try:
        async with asyncio.timeout_at(deadline):
            answer = await _present(run, decision, member, workspace)
    except TimeoutError:
        why = "deadline reached during the final presentation"
        return _as_selected(run, decision, Status.TIMEOUT, why, workspace)
    except BudgetSpent as spent:
        return _as_selected(run, decision, Status.BUDGET, spent.reason, workspace)
    except BackendError as error:
        # The team has decided: a presenter whose provider fails loses nothing of that.
        why = f"the final presentation failed ({error})"
        return _as_selected(run, decision, Status.DEGRADED, why, workspace)
    return Ended(await _final(run, decision, answer, workspace), workspace)


def _as_selected(
    run: Ending, decision: Decision, status: Status, why: str, workspace: Path | None
) -> Ended:
    """The presentation did not finish: the selected answer as it was written."""
    assert decision.winner is not None
    reason = f"{why}; the selected answer is shown as is"
    return Ended(outcome(run, decision, decision.winner.content, status, reason), workspace)


def _presenter(run: Ending, winner: Answer) -> tuple[Member, Path | None]:
    """The winner as presenter, with its notes, and the workspace it presents in (the
    snapshot of its winning answer, restored)."""
    member = next(m for m in run.members if m.id == winner.agent)
    workspace = None
    if run.workspaces is not None:
        workspace = run.workspaces.presenting(member.id, winner.label)
    if run.memories is not None and workspace is not None:
        member = replace(member, notes=(*member.notes, run.memories.presenter_note()))
    if run.aids is not None:
        member = replace(member, notes=(*member.notes, *run.aids.presenter_notes(workspace)))
    return member, workspace


async def _present(run: Ending, decision: Decision, member: Member, workspace: Path | None) -> str:
    return await present(
        member,
        run.state.question,
        decision,
        run.state.board.all_answers(),
        strategy=run.settings.final_answer_strategy,
        emit=run.emit,
        history=run.state.history,
        tools=run.tool_bounds(),
        max_tool_iterations=run.settings.max_tool_iterations,
        workspace=workspace,
        may_restart=run.state.attempt < max_attempts(run.settings),
    )


async def _final(
    run: Ending, decision: Decision, answer: str, workspace: Path | None
) -> TeamOutcome:
    """The presented answer's outcome. With a verifier, a presented text that differs
    from the selected answer is checked; the selected answer's text (and files) replace
    it when it does not pass as well as the selected answer did (`checks.py`)."""
    winner = decision.winner
    assert winner is not None
    status = Status.DEGRADED if run.state.failed else Status.OK
    reason = consensus_reason(run)
    final_check: Check | None = None
    if run.checking is not None and answer != winner.content:
        answer, final_check, replaced = await run.checking.presented(winner, answer, workspace)
        if replaced and run.workspaces is not None and workspace is not None:
            run.workspaces.presenting(winner.agent, winner.label)  # its files as checked
        reason = f"{reason}; {replaced}" if replaced else reason
    return outcome(run, decision, answer, status, reason, final_check)


async def directly(run: Ending, deadline: float) -> Ended:
    """`skip_coordination_rounds` (`direct.py`): the first agent presents at once."""
    member = run.members[0]
    label = run.state.labels.stem(member.id)
    run.emit(direct.skipped(member.id, label))
    workspace = None
    if run.workspaces is not None:
        workspace = run.workspaces.presenting_directly(member.id)
    feedback = None
    if run.state.restarts:  # an evaluation restarted the run: say what it asked for
        feedback = feedback_block(run.state.restarts[-1], workspace=bool(member.workspace))
    setup = direct.Setup(
        run.state.question,
        run.state.history,
        run.tool_bounds(),
        run.settings.max_tool_iterations,
        workspace,
        feedback,
        may_restart=run.state.attempt < max_attempts(run.settings),
    )
    done = await direct.present_first(member, setup, run.emit, deadline)
    if done.error is not None:
        run.fail(member.id, done.error)
    result = outcome(run, Decision(None, {}, None, ()), done.answer, done.status, done.reason)
    return Ended(replace(result, winner=member.id, winner_label=label), workspace)


def agreed(run: Ending, found: Agreement) -> TeamOutcome:
    """The earliest of the agreeing first answers, as written: nothing to vote on."""
    winner = next(a for a in run.state.board.all_answers() if a.label == found.agreeing[0])
    decision = Decision(winner, {}, None, ())
    reason = f"agreement: {found.describe()}; no vote needed"
    announce(run, decision, reason)
    status = Status.DEGRADED if run.state.failed else Status.OK
    return outcome(run, decision, winner.content, status, reason)


def ranked(run: Ending, found: Ranked) -> TeamOutcome:
    """The first answers split and `when_split: rank` settled it: the ranked answer, as
    written (`ranking.py`)."""
    decision = Decision(found.winner, {}, None, ())
    agreement = run.agreement()
    split = agreement.describe() if agreement else "no first answers agree"
    reason = f"ranked without a vote: {split}; {found.winner.label} won: {found.why}"
    announce(run, decision, reason)
    status = Status.DEGRADED if run.state.failed else Status.OK
    return outcome(run, decision, found.winner.content, status, reason)


def fallback(run: Ending, status: Status, reason: str) -> TeamOutcome:
    """The best available answer when the attempt cannot finish normally."""
    verdicts = run.verdicts()
    board = run.state.board
    decision = decide(board, run.settings.self_votes, verdicts)
    if not board.standing_votes() and board.total_answers:
        # The newest saw the most of the team's work; checked answers first.
        newest = best_checked(board.all_answers(), verdicts)[-1]
        decision = Decision(newest, decision.tally, None, ())
    announce(run, decision, reason)
    answer = decision.winner.content if decision.winner else ""
    return outcome(run, decision, answer, status, reason)


def consensus_reason(run: Ending) -> str:
    members, failed = run.members, run.state.failed
    if len(members) == 1:
        return "single agent answered"
    text = f"consensus: {len(members) - len(failed)} of {len(members)} agents hold a standing vote"
    stopped = sorted(agent for agent, why in failed.items() if why == STOPPED)
    if len(stopped) < len(failed):
        text += "; failed: " + ", ".join(sorted(set(failed) - set(stopped)))
    if stopped:
        text += "; stopped by you: " + ", ".join(stopped)
    return text


def announce(run: Ending, decision: Decision, reason: str) -> None:
    winner = decision.winner
    found = run.agreement()
    run.emit(
        ev.CoordinationFinished(
            winner=winner.agent if winner else None,
            winner_label=winner.label if winner else None,
            tally=dict(decision.tally),
            reason=reason,
            tie_break=decision.tie_break,
            agreement=found.describe() if found else None,
        )
    )


def outcome(
    run: Ending,
    decision: Decision,
    answer: str,
    status: Status,
    reason: str,
    final_check: Check | None = None,
) -> TeamOutcome:
    """The attempt's outcome; `final_check`: the presented text's check."""
    state, winner = run.state, decision.winner
    if not answer and state.restarts:  # better the answer found wanting than none
        answer = state.restarts[-1].answer
        reason = f"{reason}; the answer of attempt {state.attempt - 1} is kept"
    return TeamOutcome(
        answer=answer,
        status=status,
        reason=reason,
        winner=winner.agent if winner else None,
        winner_label=winner.label if winner else None,
        tally=dict(decision.tally),
        tie_break=decision.tie_break,
        votes=tuple(state.board.standing_votes()),
        answers=tuple(state.board.all_answers()),
        failed_agents=dict(state.failed),
        usage={m.id: state.ledger.of(m.id).usage for m in run.members},
        seed=state.seed,
        labels=state.labels.as_dict(),
        attempts=state.attempt,
        restarts=state.restarts,
        agreement=run.agreement(),
        checks=dict(run.verdicts() or {}),
        final_check=final_check,
    )
