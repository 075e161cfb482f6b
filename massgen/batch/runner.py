"""The driver of a batch: what to run, in which order, how many at once, and the one writer.

Phase 1 runs the team (and each member alone, with `single`) on every question that has
no finished row; phase 2 runs self-consistency once phase 1 has told it which member is
best and how many samples match the team's tokens. Jobs run on `concurrency` slots; a job
also takes a slot of every provider it calls (`provider_concurrency` each), so one
provider's rate limit is not multiplied by the number of questions in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.batch import store
from massgen.batch.replay import ResultsWriter
from massgen.batch.scoring import Scorer
from massgen.batch.tasks import Task
from massgen.batch.work import SC, SINGLE, TEAM, Job

if TYPE_CHECKING:
    from massgen.batch.executors import Executor
    from massgen.config.schema import MassgenConfig

Row = dict[str, Any]
MAX_SC_K = 64  # self-consistency samples per question, at most
MAX_CONCURRENCY = 1024


@dataclass(slots=True)
class Plan:
    tasks: Sequence[Task]
    out: Path
    scorer: Scorer
    agents: Sequence[str]
    baselines: frozenset[str] = frozenset()
    sc_k: int | None = None
    concurrency: int = 4
    provider_concurrency: int = 8
    # agent id → the provider it calls ("type:base_url"), for the per-provider bound
    providers: dict[str, str] = field(default_factory=dict)
    # The --out of a recorded batch: rows are written in its order (`batch/replay.py`).
    replay: Path | None = None


class Tally:
    """What the progress bar shows; updated by the driver only."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.failed, self.running = total, 0, 0, 0
        self.tokens, self.cost = 0, 0.0

    def finished(self, row: Row) -> None:
        self.running -= 1
        if row.get("status") in store.FINISHED:
            self.done += 1
        else:
            self.failed += 1
        self.tokens += int(row.get("tokens") or 0)
        self.cost += float(row.get("cost") or 0.0)


def providers_of(config: MassgenConfig) -> dict[str, str]:
    return {
        agent.id: f"{agent.backend.type}:{agent.backend.base_url or ''}" for agent in config.agents
    }


class Driver:
    def __init__(
        self, plan: Plan, executor: Executor, on_change: Callable[[Tally], None] = lambda t: None
    ) -> None:
        self.plan, self.executor, self.on_change = plan, executor, on_change
        self.rows = store.read_rows(plan.out)
        self.recorded = store.read_rows(plan.replay) if plan.replay is not None else {}
        self.answers = {task.id: task.answer for task in plan.tasks}
        self.width = max(1, min(plan.concurrency, MAX_CONCURRENCY))
        bound = max(1, plan.provider_concurrency)
        self.provider_slots = {p: asyncio.Semaphore(bound) for p in set(plan.providers.values())}
        self.tally = Tally(0)

    async def run(self) -> dict[tuple[str, str], Row]:
        """Every job without a finished row, in two phases. Returns the rows by key."""
        first = list(self._phase_one())
        self.tally = Tally(len(first) + self._phase_two_estimate())
        self.on_change(self.tally)
        done = store.finished(self.rows)
        results = ResultsWriter(self.plan.out, self.plan.replay, done, self._keys())
        try:
            await self.executor.start()
            await self._run_all(first, results)
            if SC in self.plan.baselines:
                await self._run_all(self._phase_two(), results)
        finally:
            results.close()
            await self.executor.aclose()
        return self.rows

    # --- what to run ---------------------------------------------------------------------------

    def _phase_one(self) -> Iterable[Job]:
        done = store.finished(self.rows)
        for task in self.plan.tasks:
            if (task.id, TEAM) not in done:
                yield Job(task.id, task.question, TEAM)
            for agent in self.plan.agents if self._runs_singles() else ():
                if (task.id, SINGLE + agent) not in done:
                    yield Job(task.id, task.question, SINGLE + agent, agent)

    def _runs_singles(self) -> bool:
        """Self-consistency needs the singles too: they choose its member."""
        return SINGLE.rstrip(":") in self.plan.baselines or SC in self.plan.baselines

    def _keys(self) -> set[tuple[str, str]]:
        """Every (id, method) this batch runs: a row in a replay waits for no other."""
        methods = [TEAM, *(SINGLE + agent for agent in self.plan.agents if self._runs_singles())]
        if SC in self.plan.baselines:
            methods.append(SC)
        return {(task.id, method) for task in self.plan.tasks for method in methods}

    def _phase_two_estimate(self) -> int:
        if SC not in self.plan.baselines:
            return 0
        done = store.finished(self.rows)
        return sum((task.id, SC) not in done for task in self.plan.tasks)

    def _phase_two(self) -> list[Job]:
        agent, k = self.sc_choice()
        done = store.finished(self.rows)
        return [
            Job(task.id, task.question, SC, agent, k)
            for task in self.plan.tasks
            if (task.id, SC) not in done
        ]

    def sc_choice(self) -> tuple[str, int]:
        """The best single member by accuracy (ties: tokens, then config order) and k.
        A k already used by this batch is kept, so a resumed batch does not change it; so is
        the recorded batch's, when replaying one (its samples are the ones on record)."""
        used = [r for (tid, m), r in self.rows.items() if m == SC and tid in self.answers]
        used = used or [r for (tid, m), r in self.recorded.items() if m == SC and r.get("k")]
        if used and used[0].get("k"):
            return str(used[0]["winner"]), int(used[0]["k"])
        ids = [task.id for task in self.plan.tasks]
        ranked = sorted(
            self.plan.agents,
            key=lambda agent: (-self._accuracy(ids, SINGLE + agent), self._tokens(ids, agent)),
        )
        best = ranked[0]
        if self.plan.sc_k:
            return best, max(1, min(self.plan.sc_k, MAX_SC_K))
        team = self._mean([r.get("tokens") for r in self._finished(ids, TEAM)])
        single = self._mean([r.get("tokens") for r in self._finished(ids, SINGLE + best)])
        k = round(team / single) if single else 1
        return best, max(1, min(k, MAX_SC_K))

    def _finished(self, ids: Sequence[str], method: str) -> list[Row]:
        rows = (self.rows.get((tid, method)) for tid in ids)
        return [r for r in rows if r and r.get("status") in store.FINISHED]

    def _accuracy(self, ids: Sequence[str], method: str) -> float:
        scores = [r["score"] for r in self._finished(ids, method) if r.get("score") is not None]
        return sum(scores) / len(scores) if scores else 0.0

    def _tokens(self, ids: Sequence[str], agent: str) -> float:
        return self._mean([r.get("tokens") for r in self._finished(ids, SINGLE + agent)])

    @staticmethod
    def _mean(values: Sequence[Any]) -> float:
        numbers = [float(v) for v in values if v is not None]
        return sum(numbers) / len(numbers) if numbers else 0.0

    # --- running -------------------------------------------------------------------------------

    async def _run_all(self, jobs: Iterable[Job], results: ResultsWriter) -> None:
        queue = iter(jobs)  # `concurrency` lanes; each takes the next job when it is free

        async def lane() -> None:
            for job in queue:
                row = await self._run_one(job)
                self._keep(row, results)

        async with asyncio.TaskGroup() as group:
            for _ in range(self.width):
                group.create_task(lane())

    async def _run_one(self, job: Job) -> Row:
        providers = sorted(self._providers(job))  # sorted: no two jobs wait on each other
        for provider in providers:
            await self.provider_slots[provider].acquire()
        try:
            self.tally.running += 1
            self.on_change(self.tally)
            return await self.executor.run(job)
        finally:
            for provider in providers:
                self.provider_slots[provider].release()

    def _providers(self, job: Job) -> set[str]:
        if job.agent is None:
            return set(self.plan.providers.values())
        return {self.plan.providers[job.agent]} if job.agent in self.plan.providers else set()

    def _keep(self, row: Row, results: ResultsWriter) -> None:
        reference = self.answers.get(str(row["id"]))
        ok = row.get("status") in store.FINISHED
        row["score"] = self.plan.scorer.score(row.get("answer") or "", reference) if ok else None
        results.append(row)
        self.rows[store.key(row)] = row
        self.tally.finished(row)
        self.on_change(self.tally)
