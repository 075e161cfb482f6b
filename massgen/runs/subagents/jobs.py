"""Background subagents: the children `spawn_subagents(..., background=true)` started, as
tasks of the parent's run (`coordination.background_subagents`, the predecessor's key).

    list_subagents(subagent_ids?)                   each one's status, elapsed time, answer
    wait_subagents(subagent_ids?, timeout_seconds)  until they end or the time is up
    cancel_subagent(subagent_id)                    stop one

A `Jobs` holds one run's background children, over all its agents: each agent sees only
its own. Bounds: `max_per_agent` and `max_per_run` children alive at once (a spawn that
would pass either is refused whole), each child's deadline (`subagent_default_timeout`,
from its spawn), and `wait_subagents` never past the latest deadline of what it waits for.
A child that ends is announced to its agent once, by a note its next model call reads
(`notes`, the member's inbox), unless a tool result already gave its answer. The run
cancels what is still running when its coordination ends (`cancel_all`, so the children's
spending lands before the run's outcome) and awaits them when it closes (`aclose`): no
child outlives its run.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

# Seconds `aclose` waits for cancelled children to finish their cleanup (logs, usage).
CLOSE_SECONDS = 10.0
TASK_PREVIEW = 200


@dataclass(frozen=True, slots=True)
class JobLimits:
    per_agent: int = 4
    per_run: int = 8


@dataclass(slots=True)
class Job:
    """One background child. `work` ends with its report (`tool.py: _report`)."""

    agent: str
    id: str
    task: str
    workspace: str | None  # relative to the agent's workspace
    timeout_seconds: float
    work: asyncio.Task[dict[str, object]]
    started: float = field(default_factory=time.monotonic)
    told: bool = False  # its end was shown to the agent (a tool result or a note)

    @property
    def running(self) -> bool:
        return not self.work.done()

    def seconds_left(self) -> float:
        return max(self.timeout_seconds - (time.monotonic() - self.started), 0.0)

    def report(self) -> dict[str, object]:
        """What the agent reads about it; a finished one's report includes its answer."""
        if self.running:
            shown: dict[str, object] = {
                "subagent_id": self.id,
                "status": "running",
                "task": _preview(self.task),
                "elapsed_seconds": round(time.monotonic() - self.started, 2),
                "timeout_seconds": self.timeout_seconds,
                "seconds_remaining": round(self.seconds_left(), 2),
            }
            if self.workspace is not None:
                shown["workspace"] = self.workspace
            return shown
        if self.work.cancelled():
            return self._ended("cancelled")
        failed = self.work.exception()
        if failed is not None:  # `_one` reports a child's failure: this is a bug's
            return {**self._ended("error"), "reason": f"{type(failed).__name__}: {failed}"}
        return self.work.result()

    def _ended(self, status: str) -> dict[str, object]:
        shown: dict[str, object] = {"subagent_id": self.id, "status": status, "answer": ""}
        if self.workspace is not None:
            shown["workspace"] = self.workspace
        return shown


class Jobs:
    """One run's background children (see the module docstring)."""

    def __init__(self, limits: JobLimits) -> None:
        self.limits = limits
        self._jobs: dict[tuple[str, str], Job] = {}  # (agent, id) -> its latest child
        self._closing = False

    def alive(self, agent: str | None = None) -> int:
        return sum(j.running and (agent is None or j.agent == agent) for j in self._jobs.values())

    def check_room(self, agent: str, count: int) -> None:
        """Raises ValueError when `count` more children of `agent` would pass a bound."""
        if self._closing:
            raise ValueError("the run is ending; no background subagent may start")
        mine, everyone = self.alive(agent), self.alive()
        if mine + count > self.limits.per_agent:
            raise ValueError(
                f"at most {self.limits.per_agent} background subagents per agent at once "
                f"(`background_subagents.max_per_agent`); {mine} of yours are running: "
                "wait for them (wait_subagents) or cancel one (cancel_subagent)"
            )
        if everyone + count > self.limits.per_run:
            raise ValueError(
                f"at most {self.limits.per_run} background subagents in the run at once "
                f"(`background_subagents.max_per_run`); {everyone} are running: "
                "wait for yours (wait_subagents) or run these without background"
            )

    def start(
        self,
        agent: str,
        child_id: str,
        task: str,
        workspace: str | None,
        timeout_seconds: float,
        work: Coroutine[Any, Any, dict[str, object]],
    ) -> Job:
        job = Job(
            agent,
            child_id,
            task,
            workspace,
            timeout_seconds,
            asyncio.create_task(work, name=f"subagent {agent}/{child_id}"),
        )
        self._jobs[(agent, child_id)] = job
        return job

    def of(self, agent: str, ids: Sequence[str] | None) -> list[Job]:
        """`agent`'s children named in `ids` (None: all of them, oldest first).

        Raises:
            ValueError: an id names none of its background children.
        """
        if ids is None:
            return [j for j in self._jobs.values() if j.agent == agent]
        unknown = [i for i in ids if (agent, i) not in self._jobs]
        if unknown:
            known = ", ".join(j.id for j in self._jobs.values() if j.agent == agent) or "none"
            raise ValueError(f"no background subagent {unknown[0]!r}; yours: {known}")
        return [self._jobs[(agent, i)] for i in dict.fromkeys(ids)]

    def listed(self, jobs: Sequence[Job]) -> str:
        """The tool result for `jobs`; the answers it shows are not announced again."""
        reports = [job.report() for job in jobs]
        for job in jobs:
            job.told = job.told or not job.running
        running = sum(job.running for job in jobs)
        body = {"subagents": reports, "count": len(reports), "running": running}
        return json.dumps(body, indent=1, ensure_ascii=False)

    async def wait(self, jobs: Sequence[Job], seconds: float) -> None:
        """Until every one of `jobs` has ended or `seconds` have passed, and never past
        the latest of their deadlines. Cancelling the wait leaves them running."""
        running = [job.work for job in jobs if job.running]
        if not running:
            return
        bound = min(seconds, max(job.seconds_left() for job in jobs if job.running) + 1.0)
        await asyncio.wait(running, timeout=max(bound, 0.0))

    async def cancel(self, job: Job) -> None:
        """Stop `job` and wait, bounded, for its cleanup (its log, its spending)."""
        if job.running:
            job.work.cancel()
            await asyncio.wait([job.work], timeout=CLOSE_SECONDS)

    def notes(self, agent: str) -> tuple[str, ...]:
        """The ends of `agent`'s children not yet shown to it, once each (its inbox)."""
        ended = [j for j in self._jobs.values() if j.agent == agent and not j.running]
        out: list[str] = []
        for job in ended:
            if job.told:
                continue
            job.told = True
            report = json.dumps(job.report(), indent=1, ensure_ascii=False)
            out.append(f"Your background subagent {job.id!r} has finished:\n{report}")
        return tuple(out)

    def cancel_all(self) -> None:
        """Stop every child still running (the coordination is over); nothing is
        announced of them."""
        for job in self._jobs.values():
            if job.running:
                job.told = True
                job.work.cancel()

    async def aclose(self) -> None:
        """Cancel what still runs and wait, bounded, for every child to finish."""
        self._closing = True
        self.cancel_all()
        works = [job.work for job in self._jobs.values() if not job.work.done()]
        if works:
            await asyncio.wait(works, timeout=CLOSE_SECONDS)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TASK_PREVIEW else flat[: TASK_PREVIEW - 1] + "…"
