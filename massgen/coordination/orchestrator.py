"""A team run: agents work concurrently on one board until every live agent's vote stands.

The orchestrator owns the board and is the only place that changes it. Agents submit
actions through `_submit`; everything observable leaves as events through `emit`. Its
lifecycles live beside it and read it as `run_state.Orchestrated`: what a member is told
for a run (`briefing.py`), whether first answers end an attempt early (`early_end.py`), how
an attempt ends in a final answer (`final_answer.py`), and the attempts of a run with the
evaluations between them (`restart_cycle.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any

from massgen.config.schema import OrchestratorConfig
from massgen.coordination import (
    actions,
    briefing,
    early_end,
    final_answer,
    first_answers,
    novelty,
    prompts,
    stopping,
)
from massgen.coordination.agent import Emit, Member, Rejected, Verdict, run_agent
from massgen.coordination.agreement import Agreement, measure
from massgen.coordination.aids import Aids
from massgen.coordination.board import Vote
from massgen.coordination.budget import Budget, BudgetedBackend, BudgetSpent
from massgen.coordination.checks import Checking, Verifier
from massgen.coordination.final_answer import Ended
from massgen.coordination.ranking import Ranked
from massgen.coordination.restart_cycle import RestartCycle
from massgen.coordination.restarts import Feedback
from massgen.coordination.resume import Resumed
from massgen.coordination.run_state import (
    Memories,
    RunState,
    TeamOutcome,
    Workspaces,
)
from massgen.coordination.tool_round import ToolBounds
from massgen.core import events as ev
from massgen.core.aio import unless
from massgen.core.checks import Check
from massgen.core.outcome import outcome_of
from massgen.core.status import Status
from massgen.log import logger


class Orchestrator:
    def __init__(
        self,
        members: Sequence[Member],
        settings: OrchestratorConfig | None = None,
        *,
        deadline_seconds: float = 1800,
        emit: Emit = lambda event: None,
        workspaces: Workspaces | None = None,
        memories: Memories | None = None,
        aids: Aids | None = None,
        verifier: Verifier | None = None,
    ) -> None:
        """`aids`: the optional aids (`aids/`: personas, criteria, paraphrases, the
        changedoc, questions between agents), when configured.
        `verifier`: checks every answer as it is published (`checks.py`)."""
        if not members:
            raise ValueError("a team needs at least one member")
        self.settings = settings or OrchestratorConfig()
        self.budget = Budget(self.settings.max_tokens, self.settings.max_cost)
        self.members = [self._budgeted(m) for m in members] if self.budget else list(members)
        self.deadline_seconds = deadline_seconds
        self._sink = emit
        self.workspaces = workspaces
        self.memories = memories
        self.aids = aids
        self.verifier = verifier
        self.checking: Checking | None = None  # this attempt's checks, with a verifier
        self.state: RunState  # the run's state, from its first line (`_start`)
        self.outcome: TeamOutcome | None = None
        self._agreed: Agreement | None = None  # first answers ended this attempt
        self._ranked: Ranked | None = None  # or were ranked, with `when_split: rank`
        self._loops: dict[str, asyncio.Task[None]] = {}  # this attempt's agent loops
        self._stopped: set[str] = set()  # by the person: out for the rest of the run

    def _budgeted(self, member: Member) -> Member:
        spent = lambda: self.state.ledger.total()  # noqa: E731 (the state of the run then)
        backend = BudgetedBackend(member.backend, self.budget, spent, member.price)
        return replace(member, backend=backend)

    # --- the run ----------------------------------------------------------------------

    async def run(
        self,
        question: str,
        history: Sequence[prompts.Turn] = (),
        resumed: Resumed | None = None,
    ) -> TeamOutcome:
        """`resumed`: what an interrupted attempt of this run decided (`resume.py`); the
        run continues from that board and ends as it would have.

        Raises:
            ResumeError: `resumed` is not this team's.
        """
        self._start(question, history, resumed)
        deadline = asyncio.get_running_loop().time() + self.deadline_seconds
        cycle = RestartCycle(self)
        try:
            outcome = await cycle.final(deadline)
        except asyncio.CancelledError:
            self._finish(cycle.interrupted())
            raise
        return self._finish(outcome)

    def _start(
        self, question: str, history: Sequence[prompts.Turn], resumed: Resumed | None
    ) -> None:
        self.state = RunState.begin(self.members, self.settings, question, history, resumed)
        labels = self.state.labels
        ids = tuple(m.id for m in self.members)
        self.checking = self._new_checking()
        if resumed is not None:  # nothing is emitted: the journal has it already
            self.state.restore(resumed, ids)
            if self.checking is not None:
                self.checking.verdicts.update(resumed.checks)
        if self.aids is not None:
            self.aids.begin(self.members, labels, self.state.board, self.emit)
        self.emit(
            ev.RunStarted(
                question=question,
                agents=ids,
                labels=labels.as_dict(),
                max_tokens=self.budget.max_tokens,
                max_cost=self.budget.max_cost_usd,
                seed=self.state.seed,
                attempt=resumed.attempts + 1 if resumed else 1,
            )
        )
        if resumed is not None:
            self._check_done()  # a run killed while presenting has nothing left to decide

    def _new_checking(self) -> Checking | None:
        if self.verifier is None:
            return None
        return Checking(self.verifier, self.state.question, self.emit, self._checked)

    def _checked(self) -> None:
        """A check ended: agents waiting for it may start, the team may be done."""
        self._wake_all()
        self._check_done()

    def _checks_pending(self) -> bool:
        return self.checking is not None and self.checking.pending

    def verdicts(self) -> dict[str, Check] | None:
        return self.checking.verdicts if self.checking is not None else None

    async def attempt(self, deadline: float) -> Ended:
        """Coordinate until this attempt has a final answer (`final_answer.py`)."""
        if self.settings.skip_coordination_rounds:
            return await final_answer.directly(self, deadline)
        try:
            async with asyncio.timeout_at(deadline):
                if self.aids is not None:  # generated before any agent starts
                    stems = self.state.labels.as_dict()
                    await self.aids.prepare(self.state.question, self.members, stems, self.emit)
                await self._coordinate()
            if self._agreed is not None:
                return Ended(final_answer.agreed(self, self._agreed))
            if self._ranked is not None:
                return Ended(final_answer.ranked(self, self._ranked))
        except TimeoutError:
            reason = f"deadline of {self.deadline_seconds:g}s reached"
            return Ended(final_answer.fallback(self, Status.TIMEOUT, reason))
        except BudgetSpent as spent:
            return Ended(final_answer.fallback(self, Status.BUDGET, spent.reason))
        return await final_answer.decided(self, deadline)

    def next_attempt(self, feedback: Feedback) -> None:
        """After `OrchestrationRestarted` (`restart_cycle.py`): a fresh board and agents."""
        self.state = self.state.restarted(self.members, feedback)
        self._agreed = self._ranked = None
        self.checking = self._new_checking()
        if self.workspaces is not None:
            self.workspaces.new_attempt()
        for agent in self._stopped:  # a stopped agent stays out of the next attempt
            self._leave(agent, stopping.STOPPED, stopped=True)

    def _finish(self, outcome: TeamOutcome) -> TeamOutcome:
        self.outcome = outcome
        self.emit(ev.RunFinished(outcome=outcome_of(outcome)))
        return outcome

    # --- events -----------------------------------------------------------------------

    def emit(self, event: ev.AnyEvent) -> None:
        self.state.ledger(event)
        self._sink(event)

    # --- coordination -----------------------------------------------------------------

    async def _coordinate(self) -> None:
        if self.checking is not None:  # a resumed run's answers the journal has no verdict for
            self.checking.catch_up(self.state.board.all_answers())
        try:
            async with asyncio.TaskGroup() as group:
                for member in (m for m in self.members if m.id not in self._stopped):
                    self._loops[member.id] = group.create_task(self._agent_loop(member))
        except* BudgetSpent as spent:  # the whole team stops: no call may start
            raise spent.exceptions[0] from None
        finally:
            self._loops.clear()
            self.state.done.set()
            if self.checking is not None:  # the deadline or the budget ended the attempt
                await self.checking.stop()

    async def _agent_loop(self, member: Member) -> None:
        while not self.state.done.is_set():
            if self._holds_vote(member.id):
                await self._wait_while(member.id, lambda: self._holds_vote(member.id))
                continue
            if self._checks_pending():  # its next prompt shows every answer's verdict
                await self._wait_while(member.id, self._checks_pending)
                continue
            if self._held_back(member.id):  # `first_answers: as_needed`
                await self._wait_while(member.id, lambda: self._held_back(member.id))
                continue
            if self._peers_on_first_answer(member.id):
                # Anything it decided now would be outdated by those first answers.
                await self._wait_while(member.id, lambda: self._peers_on_first_answer(member.id))
                continue
            try:
                verdict = await self._one_run(member)
            except BudgetSpent:
                raise
            except Exception as error:  # one agent's failure must not end the team's run
                self.fail(member.id, error)
                return
            if verdict is Verdict.STALE and not self.state.done.is_set():
                reason = self.state.restart_reason.pop(member.id, "newer answers arrived")
                self.emit(ev.AgentRestarted(agent=member.id, reason=reason))

    def _holds_vote(self, agent: str) -> bool:
        vote = self.state.board.vote_of(agent)
        return vote is not None and self.state.board.stands(vote)

    def _held_back(self, agent: str) -> bool:
        """True while `agent` waits for others' first answers (`first_answers.py`)."""
        if self.state.board.answer_count(agent) > 0:
            return False
        board, failed = self.state.board, self.state.failed
        return any(board.answer_count(m) == 0 and m not in failed for m in self._waits_for(agent))

    def _asked_late(self, agent: str) -> bool:
        """Its first answer waited for others' and is still to come: it is written blind."""
        return self.state.board.answer_count(agent) == 0 and bool(self._waits_for(agent))

    def _waits_for(self, agent: str) -> list[str]:
        order = [m.id for m in self.members]
        checked, workspaces = self.checking is not None, self._has_workspaces()
        return first_answers.waits_for(
            agent, order, self.settings, checked=checked, workspaces=workspaces
        )

    def _has_workspaces(self) -> bool:
        return any(m.workspace is not None for m in self.members)

    def _peers_on_first_answer(self, agent: str) -> bool:
        """True while this agent has answered and a live peer is still writing its first."""
        if self.state.board.answer_count(agent) == 0:
            return False
        return any(
            self.state.board.answer_count(m.id) == 0
            and self.state.runs[m.id] <= 1
            and not self._holds_vote(m.id)  # a resumed first run may vote instead
            for m in self.members
            if m.id != agent and m.id not in self.state.failed
        )

    async def _wait_while(self, agent: str, condition: Callable[[], bool]) -> None:
        wake = self.state.wake[agent]
        while condition() and not self.state.done.is_set():
            wake.clear()
            await wake.wait()

    async def _one_run(self, member: Member) -> Verdict:
        self.state.runs[member.id] += 1
        if self.state.runs[member.id] == 2 and not self.state.board.answer_count(member.id):
            self._wake_all()  # it has left its first answer: peers waiting on it may go on
        snapshot = self.state.board.versions()
        in_view = list(self.state.board.latest().values())
        if self._asked_late(member.id):  # its first answer is as independent as the others'
            snapshot, in_view = dict.fromkeys(snapshot, 0), []
        setup = briefing.brief(self, member, in_view, self._may_answer(member.id))
        self.emit(
            ev.AgentStarted(
                agent=member.id,
                run=self.state.runs[member.id],
                answers_in_view=tuple(a.label for a in in_view),
                vote_only=not setup.can_answer,
                json_actions=member.structured_actions and not setup.free_text,
            )
        )

        def submit(action: actions.NewAnswer | actions.CastVote) -> Verdict | Rejected:
            return self._submit(member.id, snapshot, action)

        self.state.fresh[member.id].clear()
        work = run_agent(member, setup, submit, self.emit)
        if self.state.board.answer_count(member.id) == 0:
            return await work  # an agent is never interrupted before its first answer
        return await _unless_set(work, self.state.fresh[member.id])

    def tool_bounds(self) -> ToolBounds:
        presents = final_answer.presents(self.settings, len(self.members))
        return ToolBounds(
            timeout_seconds=self.settings.tool_timeout_seconds,
            max_result_bytes=self.settings.max_tool_result_bytes,
            max_concurrent=self.settings.max_concurrent_tools,
            planning_mode=self.settings.coordination.enable_planning_mode and presents,
        )

    def _may_answer(self, agent: str) -> bool:
        cap = self.settings.max_new_answers_per_agent
        total_cap = self.settings.answer_limit(len(self.members))
        return (
            self.state.board.answer_count(agent) < cap
            and self.state.board.total_answers < total_cap
        )

    # --- actions ----------------------------------------------------------------------

    def _submit(
        self, agent: str, seen: dict[str, int], action: actions.NewAnswer | actions.CastVote
    ) -> Verdict | Rejected:
        if self.state.done.is_set():
            return Verdict.STALE
        if isinstance(action, actions.NewAnswer):
            verdict = self._publish(agent, action.content, seen)
        else:
            verdict = self._vote(agent, seen, action)
        if isinstance(verdict, Rejected) and self.state.board.versions() != seen:
            # Answers it has not seen may resolve it: let it look again.
            self.state.restart_reason[agent] = verdict.reason
            return Verdict.STALE
        return verdict

    def _publish(self, agent: str, content: str, seen: dict[str, int]) -> Verdict | Rejected:
        if not self._may_answer(agent):
            return Rejected("You cannot publish more answers. Call `vote` instead.")
        requirement = self.settings.answer_novelty_requirement
        # Only what it had in view can be echoed: an answer written without seeing another
        # that says the same is independent agreement (`agreement.py`), not a repeat.
        in_view = [a for a in self.state.board.latest().values() if a.version <= seen[a.agent]]
        repeat = novelty.repeated(content, in_view, requirement)
        if repeat:
            return Rejected(repeat)
        answer, retired = self.state.board.publish(agent, content)
        changes = None
        if self.workspaces is not None:  # before peers hear of it, so they can read it
            changes = self.workspaces.published(agent, answer.label)
        files, diff = (changes.files, changes.diff) if changes is not None else ((), "")
        self.emit(
            ev.AnswerPublished(
                agent=agent, label=answer.label, content=content, files=files, diff=diff
            )
        )
        if self.checking is not None:
            self.checking.start(answer)
        for vote in retired:
            self.emit(
                ev.VoteInvalidated(
                    agent=vote.voter, target_label=vote.target_label, newer_label=answer.label
                )
            )
        for other in self.members:
            if other.id != agent:
                self.state.fresh[other.id].set()
                self.state.wake[other.id].set()
        self._check_done()
        return Verdict.ACCEPTED

    def _vote(
        self, agent: str, seen: dict[str, int], action: actions.CastVote
    ) -> Verdict | Rejected:
        offered = sorted(self.state.labels.label(a, v) for a, v in seen.items() if v)
        if len(self.members) == 1 or not offered:
            return Rejected("There is nothing to vote on yet. Call `new_answer` instead.")
        parsed = self.state.labels.parse(action.label)
        if parsed is None or action.label not in offered:
            return Rejected(f"Invalid agent_id {action.label!r}. Valid: {', '.join(offered)}.")
        target, _version = parsed
        vote = Vote(agent, target, action.label, action.reason, dict(seen))
        if not self.state.board.stands(vote):
            return Verdict.STALE
        self.state.board.cast(vote)
        self.emit(
            ev.VoteCast(
                agent=agent,
                voter_label=self.state.labels.stem(agent),
                target=target,
                target_label=action.label,
                reason=action.reason,
            )
        )
        if not self.state.board.answer_count(agent):
            self._wake_all()  # peers waiting for its first answer wait no more
        self._check_done()
        return Verdict.ACCEPTED

    def fail(self, agent: str, error: Exception) -> None:
        logger.opt(exception=error).debug("agent {} failed", agent)
        self._leave(agent, str(error) or type(error).__name__)

    def stop(self, agent: str) -> str | None:
        """The person stops one agent: its call in flight is cancelled, what it published
        stays (and may still win), and the team goes on without it for the rest of the
        run, as without a failed agent. None when it was stopped; else why not."""
        coordinating = bool(self._loops) and not self.state.done.is_set()  # started, not over
        out = self.state.failed if coordinating else {}
        why_not = stopping.refusal(agent, [m.id for m in self.members], out, coordinating)
        if why_not is None:
            self._stopped.add(agent)
            self._loops[agent].cancel()
            self._leave(agent, stopping.STOPPED, stopped=True)
        return why_not

    def _leave(self, agent: str, why: str, *, stopped: bool = False) -> None:
        """`agent` is out of this attempt: its peers go on without it."""
        self.state.failed[agent] = why
        self.emit(ev.AgentFailed(agent=agent, error=why, stopped=stopped))
        self._wake_all()  # peers waiting for this agent's first answer wait no more
        self._check_done()

    def _check_done(self) -> None:
        if self._checks_pending():  # a verdict may change the winner or the agreement
            return
        live = [m.id for m in self.members if m.id not in self.state.failed]
        if self._ends_early(live):
            self.state.done.set()
            self._wake_all()
            return
        if len(self.members) == 1:
            finished = not live or self.state.board.total_answers > 0
        else:
            finished = all(self._holds_vote(agent) for agent in live)
        if finished:
            self.state.done.set()
            self._wake_all()

    def _ends_early(self, live: list[str]) -> bool:
        """The first answers agree or, with `when_split: rank`, are ranked (`early_end.py`).
        Not for a team with workspaces: there an answer is its files too."""
        if self._agreed is None and self._ranked is None and not self._has_workspaces():
            answers, verdicts = self.state.board.all_answers(), self.verdicts()
            self._agreed = early_end.agreed(answers, live, self.settings, verdicts)
            if self._agreed is None:
                order = [m.id for m in self.members]
                self._ranked = early_end.ranked(answers, live, self.settings, verdicts, order)
        return self._agreed is not None or self._ranked is not None

    def agreement(self) -> Agreement | None:
        """How this attempt's first answers agree, whether or not that ended it."""
        if self._agreed is not None:
            return self._agreed
        return measure(self.state.board.all_answers(), self.settings.agreement)

    def _wake_all(self) -> None:
        for wake in self.state.wake.values():
            wake.set()


async def _unless_set(work: Coroutine[Any, Any, Verdict], signal: asyncio.Event) -> Verdict:
    """Run `work`, but abandon it (STALE) as soon as `signal` is set."""
    task = await unless(work, signal.wait())
    return Verdict.STALE if task.cancelled() else task.result()
