"""What a run spent, folded once from its `UsageReported` events.

The orchestrator's totals, `RunResult.rounds`, status.json and the views all read a
`UsageLedger`, so they agree (an estimated count stays marked estimated everywhere).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from massgen.core import events as ev
from massgen.core.types import Usage


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens and estimated dollars of some model calls."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None  # None until a priced call arrives
    unpriced: bool = False  # some call used tokens but its model has no price

    @classmethod
    def of(cls, event: ev.UsageReported) -> Spend:
        unpriced = event.cost_usd is None and event.usage.total_tokens > 0
        return cls(event.usage, event.cost_usd, unpriced)

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.usage + other.usage,
            _add(self.cost_usd, other.cost_usd),
            self.unpriced or other.unpriced,
        )

    def to_dict(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
            "cost_usd": self.cost_usd,
            "estimated": usage.estimated,
        }


@dataclass(frozen=True, slots=True)
class Round:
    """One agent run's calls (`run` counts its runs from 1), or the final presentation
    (`phase="presentation"`) or its evaluation (`"evaluation"`); `attempt` counts the
    coordinations of the run (more than 1 after an orchestration restart)."""

    agent: str
    run: int
    phase: str
    spend: Spend
    attempt: int = 1


class UsageLedger:
    """Apply every event in order; read spend per round, per agent, or in total."""

    def __init__(self) -> None:
        self._rounds: dict[tuple[str, int, str, int], Spend] = {}
        self._run: dict[str, int] = {}
        self._attempt = 1

    def __call__(self, event: ev.AnyEvent) -> None:
        if isinstance(event, ev.AgentStarted):
            self._run[event.agent] = event.run
        elif isinstance(event, ev.OrchestrationRestarted):
            self._attempt, self._run = event.attempt, {}
        elif isinstance(event, ev.UsageReported):
            key = (event.agent, self._run.get(event.agent, 0), event.phase, self._attempt)
            self._rounds[key] = self._rounds.get(key, Spend()) + Spend.of(event)

    @property
    def rounds(self) -> list[Round]:
        return [Round(*key[:3], spend, attempt=key[3]) for key, spend in self._rounds.items()]

    def by_agent(self) -> dict[str, Spend]:
        """Each agent that reported usage, in the order it first did."""
        spent: dict[str, Spend] = {}
        for (agent, *_), spend in self._rounds.items():
            spent[agent] = spent.get(agent, Spend()) + spend
        return spent

    def of(self, agent: str) -> Spend:
        return self.by_agent().get(agent, Spend())

    def total(self) -> Spend:
        return sum(self._rounds.values(), Spend())


def _add(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b
