"""A team run: agents work concurrently on one board until every live agent's vote stands.

The orchestrator owns the board and is the only place that changes it. Agents submit
actions through `_submit`; everything observable leaves as events through `emit`.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from massgen.config.schema import OrchestratorConfig
from massgen.coordination import actions, agreement, direct, novelty, prompts, python_blocks
from massgen.coordination.agent import (
    Emit,
    Member,
    Rejected,
    RunSetup,
    Verdict,
    member_tools,
    run_agent,
)
from massgen.coordination.aids import Aids
from massgen.coordination.board import Answer, Vote
from massgen.coordination.budget import Budget, BudgetedBackend, BudgetSpent
from massgen.coordination.checks import Checking, Verifier, best_checked, failed_labels
from massgen.coordination.presentation import present
from massgen.coordination.restarts import (
    Evaluation,
    Feedback,
    answer_to_evaluate,
    due,
    evaluate,
    feedback_block,
    max_attempts,
    restarted_event,
)
from massgen.coordination.resume import Resumed, ResumeError, rebuild
from massgen.coordination.run_state import (
    Memories,
    RunState,
    TeamOutcome,
    Workspaces,
)
from massgen.coordination.runaway import Guards
from massgen.coordination.tool_round import ToolBounds, held_back
from massgen.coordination.winner import Decision, decide
from massgen.core import events as ev
from massgen.core.checks import Check
from massgen.core.errors import BackendError
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
        self._presented: TeamOutcome | None = None  # this attempt's, while it is evaluated
        self._presented_in: Path | None = None  # the presenter's workspace
        self._agreed: agreement.Agreement | None = None  # first answers ended this attempt
        self._final_check: Check | None = None  # the presented text's check

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
        try:
            outcome = await self._attempts(deadline)
        except asyncio.CancelledError:
            self._finish(self._interrupted())
            raise
        return self._finish(outcome)

    async def _attempts(self, deadline: float) -> TeamOutcome:
        """Coordinate and present; start over while attempts remain and the winner's
        evaluation of the final answer asks for it (`restarts.py`)."""
        while True:
            self._presented = outcome = await self._run_until(deadline)
            feedback = await self._evaluated(outcome, deadline)
            if feedback is None:
                return outcome
            self._restart(outcome, feedback)

    def _interrupted(self) -> TeamOutcome:
        if self._presented is None:
            return self._fallback(Status.INTERRUPTED, "interrupted by the user")
        reason = "interrupted by the user while the final answer was evaluated"
        return replace(self._presented, status=Status.INTERRUPTED, reason=reason)

    def _start(
        self, question: str, history: Sequence[prompts.Turn], resumed: Resumed | None
    ) -> None:
        self.state = RunState.begin(self.members, self.settings, question, history, resumed)
        labels = self.state.labels
        ids = tuple(m.id for m in self.members)
        self.checking = self._new_checking()
        if resumed is not None:
            self._restore(resumed)
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

    def _restore(self, resumed: Resumed) -> None:
        """The board, failures and run counts of the attempts before; nothing is emitted
        (the journal has it already)."""
        if tuple(resumed.agents) != tuple(m.id for m in self.members):
            raise ResumeError("the journal's agents are not this team's")
        rebuild(resumed, self.state.board)
        for event in resumed.spending:
            self.state.ledger(event)
        self.state.failed.update(resumed.failed)
        self.state.runs.update({a: n for a, n in resumed.runs.items() if a in self.state.runs})
        if self.checking is not None:
            self.checking.verdicts.update(resumed.checks)

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

    def _verdicts(self) -> dict[str, Check] | None:
        return self.checking.verdicts if self.checking is not None else None

    async def _run_until(self, deadline: float) -> TeamOutcome:
        if self.settings.skip_coordination_rounds:
            return await self._present_directly(deadline)
        try:
            async with asyncio.timeout_at(deadline):
                if self.aids is not None:  # generated before any agent starts
                    stems = self.state.labels.as_dict()
                    await self.aids.prepare(self.state.question, self.members, stems, self.emit)
                await self._coordinate()
            if self._agreed is not None:
                return self._agreed_outcome(self._agreed)
        except TimeoutError:
            return self._fallback(Status.TIMEOUT, f"deadline of {self.deadline_seconds:g}s reached")
        except BudgetSpent as spent:
            return self._fallback(Status.BUDGET, spent.reason)
        decision = decide(self.state.board, self.settings.self_votes, self._verdicts())
        if decision.winner is None:
            self._announce(decision, "all agents failed")
            return self._outcome(decision, "", Status.FAILED, "all agents failed")
        self._announce(decision, self._consensus_reason())
        try:
            async with asyncio.timeout_at(deadline):
                answer = await self._present(decision)
        except TimeoutError:
            reason = (
                "deadline reached during the final presentation; the selected answer is shown as is"
            )
            return self._outcome(decision, decision.winner.content, Status.TIMEOUT, reason)
        except BudgetSpent as spent:
            reason = f"{spent.reason}; the selected answer is shown as is"
            return self._outcome(decision, decision.winner.content, Status.BUDGET, reason)
        except BackendError as error:
            # The team has decided: a presenter whose provider fails loses nothing of that.
            reason = f"the final presentation failed ({error}); the selected answer is shown as is"
            return self._outcome(decision, decision.winner.content, Status.DEGRADED, reason)
        status = Status.DEGRADED if self.state.failed else Status.OK
        reason = self._consensus_reason()
        if self.checking is not None and answer != decision.winner.content:
            answer, self._final_check, replaced = await self._recheck(decision.winner, answer)
            reason = f"{reason}; {replaced}" if replaced else reason
        return self._outcome(decision, answer, status, reason)

    async def _recheck(self, winner: Answer, answer: str) -> tuple[str, Check, str | None]:
        """The presented text, checked; the selected answer's text (and files) instead
        when it does not pass as well as the selected answer did (`checks.py`)."""
        assert self.checking is not None
        answer, check, replaced = await self.checking.presented(winner, answer, self._presented_in)
        if replaced and self.workspaces is not None and self._presented_in is not None:
            self.workspaces.presenting(winner.agent, winner.label)  # its files as checked
        return answer, check, replaced

    def _finish(self, outcome: TeamOutcome) -> TeamOutcome:
        self.outcome = outcome
        self.emit(
            ev.RunFinished(
                answer=outcome.answer,
                status=outcome.status,
                reason=outcome.reason,
                winner=outcome.winner,
                winner_label=outcome.winner_label,
                failed_agents=dict(outcome.failed),
            )
        )
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
                for member in self.members:
                    group.create_task(self._agent_loop(member))
        except* BudgetSpent as spent:  # the whole team stops: no call may start
            raise spent.exceptions[0] from None
        finally:
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
            if self._peers_on_first_answer(member.id):
                # Anything it decided now would be outdated by those first answers.
                await self._wait_while(member.id, lambda: self._peers_on_first_answer(member.id))
                continue
            try:
                verdict = await self._one_run(member)
            except BudgetSpent:
                raise
            except Exception as error:  # one agent's failure must not end the team's run
                self._fail(member.id, error)
                return
            if verdict is Verdict.STALE and not self.state.done.is_set():
                reason = self.state.restart_reason.pop(member.id, "newer answers arrived")
                self.emit(ev.AgentRestarted(agent=member.id, reason=reason))

    def _holds_vote(self, agent: str) -> bool:
        vote = self.state.board.vote_of(agent)
        return vote is not None and self.state.board.stands(vote)

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
        setup = self._setup(member, in_view)
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

    def _setup(self, member: Member, in_view: list[Answer]) -> RunSetup:
        single = len(self.members) == 1
        can_answer = self._may_answer(member.id)
        sensitivity = member.voting_sensitivity or self.settings.voting_sensitivity
        # Seeded by what it sees, not by how many runs it started: a run cancelled before
        # it asked anything must not change the order later (a replay's runs may differ).
        view = ",".join(sorted(a.label for a in in_view))
        seed = zlib.crc32(f"{self.state.seed}:{member.id}:{view}".encode())
        # The vote options follow the same shuffled order as the answers: models favour
        # whatever comes first, so neither list may give any answer a fixed head start.
        shown = prompts.order_for_viewer(in_view, member.id, seed)
        free = self._free_text(member)
        system = prompts.system_prompt(
            member.system_message,
            sensitivity=sensitivity,
            vote_only=not can_answer,
            single=single,
            free_text=free,
            answers_shown=bool(shown),
        )
        if self._plans_only(member):
            note = self.settings.coordination.planning_mode_instruction or prompts.PLANNING_NOTE
            system = f"{system}\n\n{note}"
        if member.workspace is not None:
            system = f"{system}\n\n{prompts.WORKSPACE_NOTE}"
        if self.checking is not None and shown:
            system = f"{system}\n\n{prompts.CHECKS_NOTE}"
        memory = self._memory_note(member, shown)
        answered = self.state.board.answer_count(member.id) > 0
        aids = self.aids.notes(member, answered, shown) if self.aids is not None else ()
        system = "\n\n".join([system, *memory, *member.notes, *aids])
        after_question = self.aids.user_parts(member) if self.aids is not None else ()
        user = prompts.user_message(
            self.state.question,
            shown,
            history=self.state.history,
            after_question=after_question,
            bare=free,
            checks=self._verdicts(),
        )
        if free and self.settings.run_python_blocks:
            user = python_blocks.with_note(user)
        if self.state.restarts:
            block = feedback_block(self.state.restarts[-1], workspace=member.workspace is not None)
            user = f"{block}\n\n{user}"
        return RunSetup(
            system=system,
            user=user,
            vote_labels=[] if single else [a.label for a in shown],
            can_answer=can_answer,
            max_invalid_retries=self.settings.max_invalid_action_retries,
            max_tool_iterations=self.settings.max_tool_iterations,
            tools=self._tool_bounds(),
            guards=Guards(
                max_reply_chars=self.settings.max_reply_chars,
                max_identical_tool_calls=self.settings.max_identical_tool_calls,
                max_repeated_lines=self.settings.max_repeated_lines,
            ),
            free_text=free,
            python_blocks=free and self.settings.run_python_blocks,
        )

    def _free_text(self, member: Member) -> bool:
        """It writes its turn as free text (`free_text.py`): a JSON-action model with no
        tools of its own (those still go through the JSON `tool` action)."""
        return (
            self.settings.free_text_actions
            and member.structured_actions
            and not member_tools(member)
        )

    def _memory_note(self, member: Member, shown: Sequence[Answer]) -> tuple[str, ...]:
        if self.memories is None:
            return ()
        note = self.memories.note(member.id, [a.label for a in shown if a.agent != member.id])
        return (note,) if note else ()

    def _tool_bounds(self) -> ToolBounds:
        return ToolBounds(
            timeout_seconds=self.settings.tool_timeout_seconds,
            max_result_bytes=self.settings.max_tool_result_bytes,
            max_concurrent=self.settings.max_concurrent_tools,
            planning_mode=self.settings.coordination.enable_planning_mode and self._presents(),
        )

    def _presents(self) -> bool:
        """A final presentation call follows coordination. Planning mode needs one to run
        what it held back; without one (a single agent, `winner_reuse`,
        `skip_final_presentation`) it holds nothing back."""
        reuse = self.settings.final_answer_strategy == "winner_reuse"
        return len(self.members) > 1 and not (reuse or self.settings.skip_final_presentation)

    def _plans_only(self, member: Member) -> bool:
        """Planning mode holds back at least one of this member's tools."""
        bounds = self._tool_bounds()
        return any(held_back(spec, "coordination", bounds) for spec in member_tools(member))

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
        if self.workspaces is not None:  # before peers hear of it, so they can read it
            self.workspaces.published(agent, answer.label)
        self.emit(ev.AnswerPublished(agent=agent, label=answer.label, content=content))
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

    def _fail(self, agent: str, error: Exception) -> None:
        logger.opt(exception=error).debug("agent {} failed", agent)
        self.state.failed[agent] = str(error) or type(error).__name__
        self.emit(ev.AgentFailed(agent=agent, error=self.state.failed[agent]))
        self._wake_all()  # peers waiting for this agent's first answer wait no more
        self._check_done()

    def _check_done(self) -> None:
        if self._checks_pending():  # a verdict may change the winner or the agreement
            return
        live = [m.id for m in self.members if m.id not in self.state.failed]
        if self._agreement_ends(live):
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

    def _agreement_ends(self, live: list[str]) -> bool:
        """The live agents' first answers all agree (`agreement.py`). Not for a team with
        workspaces: there an answer is its files too, and the presenter writes them."""
        if self._agreed is not None:
            return True
        if any(m.workspace is not None for m in self.members):
            return False
        answers = self.state.board.all_answers()
        failed = failed_labels(self._verdicts() or {})
        settings = self.settings
        self._agreed = agreement.ends_run(
            answers, live, settings.agreement, failed, settings.agreement_quorum
        )
        return self._agreed is not None

    def _agreed_outcome(self, found: agreement.Agreement) -> TeamOutcome:
        """The earliest of the agreeing first answers, as written: nothing to vote on."""
        winner = next(a for a in self.state.board.all_answers() if a.label == found.agreeing[0])
        decision = Decision(winner, {}, None, ())
        reason = f"agreement: {found.describe()}; no vote needed"
        self._announce(decision, reason)
        status = Status.DEGRADED if self.state.failed else Status.OK
        return self._outcome(decision, winner.content, status, reason)

    def _agreement(self) -> agreement.Agreement | None:
        """How this attempt's first answers agree, whether or not that ended it."""
        if self._agreed is not None:
            return self._agreed
        return agreement.measure(self.state.board.all_answers(), self.settings.agreement)

    def _wake_all(self) -> None:
        for wake in self.state.wake.values():
            wake.set()

    # --- the end ----------------------------------------------------------------------

    def _consensus_reason(self) -> str:
        live = len(self.members) - len(self.state.failed)
        if len(self.members) == 1:
            return "single agent answered"
        text = f"consensus: {live} of {len(self.members)} agents hold a standing vote"
        if self.state.failed:
            text += "; failed: " + ", ".join(sorted(self.state.failed))
        return text

    def _announce(self, decision: Decision, reason: str) -> None:
        winner = decision.winner
        self.emit(
            ev.CoordinationFinished(
                winner=winner.agent if winner else None,
                winner_label=winner.label if winner else None,
                tally=dict(decision.tally),
                reason=reason,
                tie_break=decision.tie_break,
                agreement=found.describe() if (found := self._agreement()) else None,
            )
        )

    async def _present(self, decision: Decision) -> str:
        assert decision.winner is not None
        strategy = self.settings.final_answer_strategy
        if not self._presents():
            return decision.winner.content
        member = next(m for m in self.members if m.id == decision.winner.agent)
        workspace = None
        if self.workspaces is not None:
            workspace = self.workspaces.presenting(member.id, decision.winner.label)
        if self.memories is not None and workspace is not None:
            member = replace(member, notes=(*member.notes, self.memories.presenter_note()))
        if self.aids is not None:
            member = replace(member, notes=(*member.notes, *self.aids.presenter_notes(workspace)))
        self._presented_in = workspace
        return await present(
            member,
            self.state.question,
            decision,
            self.state.board.all_answers(),
            strategy=strategy,
            emit=self.emit,
            history=self.state.history,
            tools=self._tool_bounds(),
            max_tool_iterations=self.settings.max_tool_iterations,
            workspace=workspace,
            may_restart=self.state.attempt < max_attempts(self.settings),
        )

    async def _present_directly(self, deadline: float) -> TeamOutcome:
        """`skip_coordination_rounds` (`direct.py`): the first agent presents at once."""
        member = self.members[0]
        label = self.state.labels.stem(member.id)
        self.emit(direct.skipped(member.id, label))
        if self.workspaces is not None:
            self._presented_in = self.workspaces.presenting_directly(member.id)
        feedback = None
        if self.state.restarts:  # an evaluation restarted the run: say what it asked for
            feedback = feedback_block(self.state.restarts[-1], workspace=bool(member.workspace))
        setup = direct.Setup(
            self.state.question,
            self.state.history,
            self._tool_bounds(),
            self.settings.max_tool_iterations,
            self._presented_in,
            feedback,
            may_restart=self.state.attempt < max_attempts(self.settings),
        )
        done = await direct.present_first(member, setup, self.emit, deadline)
        if done.error is not None:
            self._fail(member.id, done.error)
        outcome = self._outcome(Decision(None, {}, None, ()), done.answer, done.status, done.reason)
        return replace(outcome, winner=member.id, winner_label=label)

    # --- evaluation and restarts (`restarts.py`) -----------------------------------------

    async def _evaluated(self, outcome: TeamOutcome, deadline: float) -> Feedback | None:
        """None: the final answer stands. Else why the coordination must start over."""
        attempt = self.state.attempt
        if not due(self.settings, attempt, outcome.status, outcome.winner):
            return None
        member = next(m for m in self.members if m.id == outcome.winner)
        answer, override = answer_to_evaluate(self.settings, attempt, outcome.answer)
        setup = Evaluation(
            question=self.state.question,
            answer=answer,
            attempt=attempt,
            tools=self._tool_bounds(),
            max_tool_iterations=self.settings.max_tool_iterations,
            workspace=self._presented_in,
            history=self.state.history,
            debug_override=override,
        )
        return await evaluate(member, setup, self.emit, deadline)

    def _restart(self, outcome: TeamOutcome, feedback: Feedback) -> None:
        """Emitted before the reset, so the journal has it before the next attempt."""
        self.emit(restarted_event(feedback, max_attempts(self.settings), outcome.winner or ""))
        self.state = self.state.restarted(self.members, feedback)
        self._presented = self._presented_in = self._agreed = self._final_check = None
        self.checking = self._new_checking()
        if self.workspaces is not None:
            self.workspaces.new_attempt()

    def _fallback(self, status: Status, reason: str) -> TeamOutcome:
        """The best available answer when the run cannot finish normally."""
        verdicts = self._verdicts()
        decision = decide(self.state.board, self.settings.self_votes, verdicts)
        if not self.state.board.standing_votes() and self.state.board.total_answers:
            # The newest saw the most of the team's work; checked answers first.
            newest = best_checked(self.state.board.all_answers(), verdicts)[-1]
            decision = Decision(newest, decision.tally, None, ())
        self._announce(decision, reason)
        answer = decision.winner.content if decision.winner else ""
        return self._outcome(decision, answer, status, reason)

    def _outcome(self, decision: Decision, answer: str, status: Status, reason: str) -> TeamOutcome:
        winner = decision.winner
        if not answer and self.state.restarts:  # better the answer found wanting than none
            answer = self.state.restarts[-1].answer
            reason = f"{reason}; the answer of attempt {self.state.attempt - 1} is kept"
        return TeamOutcome(
            answer=answer,
            status=status,
            reason=reason,
            winner=winner.agent if winner else None,
            winner_label=winner.label if winner else None,
            tally=dict(decision.tally),
            tie_break=decision.tie_break,
            votes=tuple(self.state.board.standing_votes()),
            answers=tuple(self.state.board.all_answers()),
            failed=dict(self.state.failed),
            usage={m.id: self.state.ledger.of(m.id).usage for m in self.members},
            seed=self.state.seed,
            labels=self.state.labels.as_dict(),
            attempts=self.state.attempt,
            restarts=self.state.restarts,
            agreement=self._agreement(),
            checks=dict(self._verdicts() or {}),
            final_check=self._final_check,
        )


async def _unless_set(work: Coroutine[Any, Any, Verdict], signal: asyncio.Event) -> Verdict:
    """Run `work`, but abandon it (STALE) as soon as `signal` is set."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return Verdict.STALE if task.cancelled() else task.result()
