"""A spending limit for one run: no model call starts that the budget cannot pay for.

`--max-tokens N` and `--max-cost USD` (or `max_tokens` / `max_cost` under
`orchestrator:`). Before each call, the tokens and dollars spent so far plus the call's
prompt (estimated from its length) are checked against the limits; a call that would pass
one is not made, and the run ends with its best answer so far, status `budget`.

The cost limit sees only priced calls: a model without a known price spends tokens the
cost limit cannot count (the run warns at start; `--max-tokens` counts every call).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from massgen.backends.base import Backend
from massgen.backends.common import estimated_usage, request_chars
from massgen.core.errors import MassgenError
from massgen.core.types import BackendEvent, Request, Usage
from massgen.core.usage import Spend


class BudgetSpent(MassgenError):
    """The next call would pass the run's budget; `reason` says which limit and by how much."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class Budget:
    max_tokens: int | None = None
    max_cost_usd: float | None = None

    def __bool__(self) -> bool:
        return self.max_tokens is not None or self.max_cost_usd is not None

    def refusal(self, spent: Spend, next_call: Usage, next_cost: float | None) -> str | None:
        """Why a call costing about `next_call` / `next_cost` may not start, or None."""
        tokens = spent.usage.total_tokens
        if self.max_tokens is not None and tokens + next_call.total_tokens > self.max_tokens:
            return (
                f"token budget reached: {tokens:,} spent, and the next call "
                f"(~{next_call.total_tokens:,}) would pass {self.max_tokens:,}"
            )
        cost = spent.cost_usd or 0.0
        if self.max_cost_usd is not None and cost + (next_cost or 0.0) > self.max_cost_usd:
            return (
                f"cost budget reached: ${cost:.4f} spent, and the next call "
                f"(~${next_cost or 0.0:.4f}) would pass ${self.max_cost_usd:.4f}"
            )
        return None


class BudgetedBackend:
    """A member's backend that refuses, with `BudgetSpent`, to start a call the budget
    cannot pay for. `spent` reads the run's spend so far; `price` prices a usage."""

    def __init__(
        self,
        backend: Backend,
        budget: Budget,
        spent: Callable[[], Spend],
        price: Callable[[Usage], float | None] | None,
    ) -> None:
        self._backend, self._budget, self._spent, self._price = backend, budget, spent, price

    async def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        prompt = estimated_usage(request_chars(request), 0)
        cost = self._price(prompt) if self._price is not None else None
        reason = self._budget.refusal(self._spent(), prompt, cost)
        if reason is not None:
            raise BudgetSpent(reason)
        async for event in self._backend.stream(request):
            yield event

    async def aclose(self) -> None:
        await self._backend.aclose()

    def __getattr__(self, name: str) -> Any:  # what else callers read of the backend
        return getattr(self._backend, name)
