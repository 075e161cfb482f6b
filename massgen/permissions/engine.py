"""The decision: `await engine.decide(call)` -> allowed or not, why, and who said so.

    floor -> canonical paths -> deny rules -> ask rules -> allow rules -> risk default
          -> approval -> audit record

Each step is one method over the call's subjects (`subjects.py`). Deny wins: a subject
denied anywhere denies the call; a call is allowed only when every subject is. An
exception in any step, the approver's included, is a deny whose reason names the step,
and a decision the ledger cannot record is a deny too.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from massgen.core.effects import Delete, Effect, Read, Write
from massgen.core.toolbox import Phase
from massgen.log import logger
from massgen.permissions import grants
from massgen.permissions.approval import ApprovalRequest, Approver, Choice, Operator, Risk
from massgen.permissions.ledger import Ledger, Record
from massgen.permissions.paths import secret
from massgen.permissions.policy import ASK_RULE, PolicyApprover
from massgen.permissions.risk import Zones, default
from massgen.permissions.rules import Rule
from massgen.permissions.subjects import Refusal, Subject, floor_check, subjects_of

STEPS = ("floor", "canonical", "deny", "ask", "allow", "risk", "approval")
_RANK: dict[Risk, int] = {"low": 0, "medium": 1, "high": 2}
MAX_SHOWN_ARGUMENTS = 2000
# The backstop for an approver that never answers (the terminal's and the handshake's
# own timeouts are 300 s). The tool's timeout no longer bounds the wait: `Guarded.authorize`
# runs before it starts.
MAX_APPROVAL_SECONDS = 900.0


@dataclass(frozen=True, slots=True)
class Call:
    agent: str
    tool: str
    effects: tuple[Effect, ...]
    zones: Zones = field(default_factory=Zones)
    phase: Phase = "coordination"
    call_id: str = ""
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    reason: str
    operator: Operator
    risk: str = ""
    rule: str = ""
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Book:
    """One agent's rules, by bucket, in the order they are checked."""

    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()

    @classmethod
    def of(
        cls,
        *,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        project: Path | None = None,
    ) -> Book:
        """A book from rule texts. Raises RuleError for a rule that can never match."""
        from massgen.permissions.rules import parse_all

        base = project or Path.cwd()
        return cls(parse_all(deny, base), parse_all(ask, base), parse_all(allow, base))

    def plus(self, other: Book) -> Book:
        return Book(self.deny + other.deny, self.ask + other.ask, self.allow + other.allow)


@dataclass
class _State:
    call: Call
    subjects: list[Subject] = field(default_factory=list)
    pending: list[Subject] = field(default_factory=list)  # not yet allowed
    asked: dict[str, str] = field(default_factory=dict)  # subject key -> why it is asked
    risk: Risk = "low"
    rule: str = ""
    decision: Decision | None = None
    choice: str = ""

    def deny(self, reason: str, operator: Operator, rule: str = "", risk: str = "high") -> None:
        self.decision = Decision(False, reason, operator, risk, rule or self.rule)

    def raise_risk(self, risk: Risk) -> None:
        if _RANK[risk] > _RANK[self.risk]:
            self.risk = risk


class Engine:
    """One run's (or chat session's) permission engine."""

    def __init__(
        self,
        *,
        books: dict[str, Book] | None = None,
        default_book: Book = Book(),
        approver: Approver | None = None,
        ledger: Ledger | None = None,
        max_consecutive_auto: int | None = None,
        grants_path: Path | None = None,
        project: Path | None = None,
        emit: Callable[[Call, Decision], None] | None = None,
        roles: Mapping[str, str] | None = None,
        approval_seconds: float = MAX_APPROVAL_SECONDS,
        session: set[str] | None = None,
    ) -> None:
        """`session`: the "for this session" grants, shared with the caller when given (a
        chat keeps one set for all its turns); granting adds to it."""
        self.approval_seconds = approval_seconds
        self.books = dict(books or {})
        self.roles = dict(roles or {})  # agent -> "read-only" | "read-write" (the sandbox reads it)
        self.default_book = default_book
        self.approver: Approver = approver or PolicyApprover()
        self.ledger = ledger or Ledger(None)
        self.budget = max_consecutive_auto
        self.grants_path = grants_path
        self.project = project or Path.cwd()
        self.emit = emit
        # Subject keys granted for the rest of the run (of the chat session, when shared).
        self.session: set[str] = session if session is not None else set()
        self._auto: dict[str, int] = {}  # agent -> automatic approvals in a row

    def role(self, agent: str) -> str:
        return self.roles.get(agent, "read-write")

    def book(self, agent: str) -> Book:
        return self.books.get(agent, self.default_book)

    async def decide(self, call: Call) -> Decision:
        state = _State(call)
        step = STEPS[0]
        try:
            for step in STEPS:
                await self._step(step, state)
                if state.decision is not None:
                    break
        except asyncio.CancelledError:
            state.deny("cancelled before a decision", "error")
            self._audit(state)
            raise
        except Exception as error:  # fail closed: an error is never a yes
            state.deny(f"the permission check failed ({step}: {_say(error)})", "error")
        if state.decision is None:
            state.deny("no decision was reached", "error")
        return self._audit(state)

    async def refuse(self, call: Call, reason: str) -> Decision:
        """Deny `call` without judging it (its effects could not be told), and record it."""
        state = _State(call)
        state.deny(f"the call cannot be checked ({reason})", "error")
        return self._audit(state)

    async def _step(self, step: str, state: _State) -> None:
        match step:
            case "floor":
                self._floor(state)
            case "canonical":
                self._canonical(state)
            case "deny":
                self._deny(state)
            case "ask":
                self._ask(state)
            case "allow":
                self._allow(state)
            case "risk":
                self._risk(state)
            case "approval":
                await self._approval(state)

    # --- the steps --------------------------------------------------------------------

    def _floor(self, state: _State) -> None:
        try:
            floor_check(state.call.effects)
        except Refusal as refusal:
            state.deny(str(refusal), "floor", rule="floor")

    def _canonical(self, state: _State) -> None:
        try:
            state.subjects = subjects_of(state.call.effects)
        except Refusal as refusal:
            state.deny(str(refusal), "rule", rule="canonical path")
            return
        state.pending = list(state.subjects)
        if not state.subjects:
            state.decision = Decision(True, "the call has no effects", "rule", "low")

    def _deny(self, state: _State) -> None:
        book = self.book(state.call.agent)
        for subject in state.subjects:
            if subject.path is not None and (why := secret(subject.path, state.call.zones)):
                state.deny(f"{why}; secrets are never opened", "rule", rule="secret")
                return
            rule = _first(book.deny, subject)
            if rule is not None:
                state.deny(f"{subject.describe()} is denied by `{rule.text}`", "rule", rule.text)
                return

    def _ask(self, state: _State) -> None:
        for subject in state.subjects:
            rule = _first(self.book(state.call.agent).ask, subject)
            if rule is not None:
                state.asked[subject.key] = f"{ASK_RULE}`{rule.text}`"
                state.rule = state.rule or rule.text
                state.raise_risk("medium")

    def _allow(self, state: _State) -> None:
        allowed: list[str] = []
        for subject in state.pending:
            if subject.key in state.asked:
                continue
            rule = _first(self.book(state.call.agent).allow, subject)
            if rule is not None:
                allowed.append(subject.key)
                state.rule = state.rule or rule.text
        state.pending = [s for s in state.pending if s.key not in allowed]
        if not state.pending:
            state.decision = Decision(True, f"allowed by `{state.rule}`", "rule", "low", state.rule)

    def _risk(self, state: _State) -> None:
        still: list[Subject] = []
        for subject in state.pending:
            verdict, risk, why = default(subject, state.call.zones, state.call.phase)
            if subject.key in state.asked:  # an ask rule: the risk is still shown
                state.raise_risk(risk)
                still.append(subject)
                continue
            if verdict == "deny":
                state.deny(f"{subject.describe()} is refused: {why}", "policy", "risk default")
                return
            if verdict == "ask":
                state.asked[subject.key] = why
                state.raise_risk(risk)
                still.append(subject)
        state.pending = still
        if not state.pending:
            rule = state.rule or "risk default"
            state.decision = Decision(
                True, "allowed: low risk inside the managed paths", "rule", "low", rule
            )

    async def _approval(self, state: _State) -> None:
        agent = state.call.agent
        if all(s.key in self.session for s in state.pending):
            self._automatic(state, "granted earlier in this session", "session grant")
            return
        human = self.approver.operator == "human"
        if not human and self.budget is not None and self._auto.get(agent, 0) >= self.budget:
            state.deny(
                f"{self.budget} automatic approvals in a row; a person must decide now",
                "policy",
                rule="max_consecutive_auto",
                risk=state.risk,
            )
            return
        try:
            async with asyncio.timeout(self.approval_seconds):
                choice = await self.approver.ask(self._request(state))
        except TimeoutError:
            why = f"no answer within {self.approval_seconds:g}s"
            state.deny(why, "error", rule="approval timeout", risk=state.risk)
            return
        state.choice = str(choice)
        if not isinstance(choice, Choice) or choice is Choice.DENY:
            state.deny(
                f"{'a person' if human else 'the approval policy'} said no "
                f"({self._asked_reason(state)})",
                self.approver.operator,
                risk=state.risk,
            )
            return
        self._auto[agent] = 0 if human else self._auto.get(agent, 0) + 1
        if choice in (Choice.SESSION, Choice.ALWAYS):
            self.session.update(s.key for s in state.pending)
        if choice is Choice.ALWAYS:
            self._remember(agent, state.pending)
        state.decision = Decision(
            True, f"approved ({choice.value})", self.approver.operator, state.risk, state.rule
        )

    def _automatic(self, state: _State, reason: str, rule: str) -> None:
        agent = state.call.agent
        if self.budget is not None and self._auto.get(agent, 0) >= self.budget:
            state.deny(
                f"{self.budget} automatic approvals in a row", "policy", rule="max_consecutive_auto"
            )
            return
        self._auto[agent] = self._auto.get(agent, 0) + 1
        state.decision = Decision(True, reason, "rule", state.risk, rule)

    def _remember(self, agent: str, subjects: list[Subject]) -> None:
        """An "always" grant: an allow rule for this run, and in the settings file."""
        from massgen.permissions import rules

        texts = grants.grant_rules(subjects)
        new = tuple(rules.parse(t, self.project) for t in texts)
        self.books[agent] = self.book(agent).plus(Book(allow=new))
        if self.grants_path is not None and texts:
            grants.store(self.grants_path, texts)

    def _request(self, state: _State) -> ApprovalRequest:
        call = state.call
        return ApprovalRequest(
            agent=call.agent,
            tool=call.tool,
            arguments=call.arguments[:MAX_SHOWN_ARGUMENTS],
            effects=_canonical_effects(call.effects),
            risk=state.risk,
            reason=self._asked_reason(state),
            phase=call.phase,
            details=tuple(s.describe() for s in state.pending),
        )

    @staticmethod
    def _asked_reason(state: _State) -> str:
        reasons = [state.asked[s.key] for s in state.pending if s.key in state.asked]
        rule_reasons = [r for r in reasons if r.startswith(ASK_RULE)]
        return (rule_reasons or reasons or ["asked"])[0]

    # --- the record ---------------------------------------------------------------------

    def _audit(self, state: _State) -> Decision:
        decision = state.decision
        assert decision is not None
        call = state.call
        record = Record(
            agent=call.agent,
            tool=call.tool,
            call_id=call.call_id,
            effects=tuple(s.describe() for s in state.subjects) or tuple(map(repr, call.effects)),
            decision="allow" if decision.allowed else "deny",
            operator=decision.operator,
            reason=decision.reason,
            risk=decision.risk,
            rule=decision.rule,
            phase=call.phase,
            arguments=call.arguments,
            choice=state.choice,
        )
        try:
            seq = self.ledger.append(record)
        except Exception as error:
            print(
                f"massgen: warning: permission ledger not written ({error}); denying",
                file=sys.stderr,
            )
            logger.warning("permission ledger not written: {}", error)
            decision = Decision(False, "the decision could not be recorded", "error", decision.risk)
            seq = 0
        decision = replace(decision, seq=seq)
        if self.emit is not None:
            try:
                self.emit(call, decision)
            except Exception as error:  # a view's failure is not a decision's
                logger.warning("permission event not shown: {}", error)
        return decision


def _first(rules: tuple[Rule, ...], subject: Subject) -> Rule | None:
    return next((rule for rule in rules if rule.matches(subject)), None)


def _canonical_effects(effects: tuple[Effect, ...]) -> tuple[Effect, ...]:
    import os

    out: list[Effect] = []
    for effect in effects:
        if isinstance(effect, Read | Write | Delete):
            effect = type(effect)(Path(os.path.realpath(effect.path)))
        out.append(effect)
    return tuple(out)


def _say(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
