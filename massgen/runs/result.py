"""What a run returns: how it ended, with its votes, spending, changes and checks.

`RunResult` extends `core.outcome.Outcome`; `TeamRun.result` (`runs/turn.py`) builds it
from the orchestrator's `TeamOutcome` and the run's usage ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from massgen.coordination.agreement import Agreement
from massgen.coordination.restarts import Feedback
from massgen.core.checks import Check, tally
from massgen.core.outcome import Outcome
from massgen.core.types import Usage
from massgen.workspace.context import ContextChanges


@dataclass(frozen=True, slots=True)
class VoteRecord:
    voter: str
    target: str
    target_label: str
    reason: str


@dataclass(frozen=True, slots=True)
class RoundUsage:
    """Tokens and estimated cost of one agent's run (`round` counts its runs from 1) or of
    the final presentation (`phase="presentation"`)."""

    agent: str
    round: int
    phase: str
    usage: Usage
    cost_usd: float | None
    attempt: int = 1  # the coordination it belongs to (after an orchestration restart: 2, ...)


@dataclass(frozen=True, slots=True)
class RunResult(Outcome):
    """How the run ended (`Outcome`: `answer`, `status`, `reason`, `winner`,
    `winner_label`, `failed_agents`), with the votes, what it spent and what it changed."""

    votes: tuple[VoteRecord, ...]
    tally: dict[str, int]
    usage: dict[str, Usage]
    log_dir: Path | None
    tie_break: str | None = None
    # Estimated dollars per agent from the shipped price table; None: the model has no price.
    cost_usd: dict[str, float | None] = field(default_factory=dict)
    rounds: tuple[RoundUsage, ...] = ()
    # Files of the user's context paths this run created, modified or deleted.
    context_changes: ContextChanges = field(default_factory=ContextChanges)
    # Coordinations run (`max_orchestration_restarts`), and why each restart was asked for.
    attempts: int = 1
    # Model calls answered from a recorded run (`replay=`) and calls made to the model.
    replayed_calls: int = 0
    live_calls: int = 0
    restarts: tuple[Feedback, ...] = ()
    # How the independent first answers agreed, and whether that ended the run.
    agreement: Agreement | None = None
    # The `verifier:`'s verdict on each answer (by label), and on the presented text.
    checks: dict[str, Check] = field(default_factory=dict)
    final_check: Check | None = None

    @property
    def one_call_tokens(self) -> float | None:
        """What one agent's first answer cost, averaged over the agents: the price of asking
        one model once, to weigh the team's tokens against. None before any answer."""
        firsts = [
            r.usage.total_tokens
            for r in self.rounds
            if r.round == 1 and r.phase == "coordination" and r.attempt == 1
        ]
        return sum(firsts) / len(firsts) if firsts else None

    def worth(self) -> str:
        """ "3 of 3 first answers agree (numeric: 72); checks: 2 passed, 1 failed, the
        selected answer passed; 2,808 tokens, 8.1x one call"."""
        parts = [self.agreement.describe()] if self.agreement else []
        if self.checks:
            parts.append(self.checks_said())
        tokens = self.total_usage.total_tokens
        one = self.one_call_tokens
        ratio = f", {tokens / one:.1f}x one call" if one else ""
        parts.append(f"{tokens:,} tokens{ratio}")
        return "; ".join(parts)

    def checks_said(self) -> str:
        """ "checks: 2 passed, 1 failed, the selected answer passed" ("" without any)."""
        if not self.checks:
            return ""
        text = f"checks: {tally(self.checks.values())}"
        selected = self.checks.get(self.winner_label or "")
        if selected is not None:
            text += f", the selected answer {selected.verdict}"
        if self.final_check is not None and self.final_check is not selected:
            text += f", the final text {self.final_check.verdict}"
        return text

    @property
    def total_cost_usd(self) -> float | None:
        """The sum over agents with a price; None when no agent has one."""
        known = [cost for cost in self.cost_usd.values() if cost is not None]
        return sum(known) if known else None

    @property
    def ok(self) -> bool:
        return self.status.complete

    @property
    def total_usage(self) -> Usage:
        return sum(self.usage.values(), Usage())
