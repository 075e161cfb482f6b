"""Where jobs run: in this process (`local`) or in a pool of Ray actors (`ray`).

Either way the driver decides what runs when (concurrency, provider bounds, phases) and
is the only writer; an executor only turns a job into a row. Ray actors are long-lived
workers: a local model loads once per actor process, and baseline calls reuse the backends
the actor built once (a team run builds its own, as `TeamRun` always does).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from massgen.batch.work import Job, Worker
from massgen.core.errors import ConfigError

if TYPE_CHECKING:
    from massgen.runs.loading import LoadedConfig

Row = dict[str, Any]
MAX_ACTORS = 256


class Executor(Protocol):
    async def start(self) -> None: ...
    async def run(self, job: Job) -> Row: ...
    async def aclose(self) -> None: ...


class LocalExecutor:
    """Jobs as coroutines of this event loop, on one shared worker."""

    def __init__(
        self, loaded: LoadedConfig, out: Path, scorer_spec: str, replay: Path | None = None
    ) -> None:
        self.worker = Worker(loaded, out, scorer_spec, replay)

    async def start(self) -> None:
        self.worker.members()  # a missing key fails the batch here, not every job

    async def run(self, job: Job) -> Row:
        return await self.worker.run(job)

    async def aclose(self) -> None:
        await self.worker.aclose()


class RayExecutor:
    """Jobs as calls on a pool of async Ray actors; the least busy actor gets the next job.

    `ray.init()` joins the cluster at `RAY_ADDRESS` when it is set, else starts a local one
    with `actors` CPUs. The config goes to the actors as written (`${VAR}`s unexpanded), so
    API keys resolve from each worker's own environment and never travel through Ray.
    """

    def __init__(
        self,
        loaded: LoadedConfig,
        out: Path,
        scorer_spec: str,
        *,
        actors: int,
        concurrency: int,
        replay: Path | None = None,
    ) -> None:
        if loaded.raw is None:
            raise ConfigError("--executor ray needs a config file or preset (--config)")
        self.config: Any = loaded.raw
        self.out, self.scorer_spec = out.resolve(), scorer_spec
        self.replay = str(replay.resolve()) if replay is not None else None
        self.size = max(1, min(actors, MAX_ACTORS))
        self.concurrency = max(1, concurrency)
        self.actors: list[Any] = []
        self.busy: list[int] = []

    async def start(self) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError(
                "--executor ray needs Ray", fix="pip install 'massgen[ray]'"
            ) from None
        if not ray.is_initialized():
            if os.environ.get("RAY_ADDRESS"):
                ray.init(log_to_driver=False)
            else:
                ray.init(num_cpus=self.size, log_to_driver=False, include_dashboard=False)
        remote: Any = ray.remote  # its stubs do not list the actor options
        actor = remote(num_cpus=1, max_concurrency=self.concurrency)(BatchActor)
        self.actors = [
            actor.remote(self.config, str(self.out), self.scorer_spec, self.replay)
            for _ in range(self.size)
        ]
        self.busy = [0] * self.size
        # Every actor has built its backends (or says why it cannot) before a job is sent.
        await _gather_refs([a.ready.remote() for a in self.actors])

    async def run(self, job: Job) -> Row:
        index = self.busy.index(min(self.busy))
        self.busy[index] += 1
        try:
            row: Row = await self.actors[index].run.remote(job)
        except Exception as error:  # the actor died (its node went away, ...): retried on rerun
            text = " ".join(str(error).split())[:300]
            return {"id": job.id, "method": job.method, "answer": "", "status": "failed",
                    "error": f"ray: {text}", "tokens": 0, "cost": None, "seconds": 0.0}  # fmt: skip
        finally:
            self.busy[index] -= 1
        return row

    async def aclose(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []


class BatchActor:
    """A Ray actor around a `Worker` (made remote in `RayExecutor.start`, so importing this
    module does not import Ray)."""

    def __init__(self, config: Any, out: str, scorer_spec: str, replay: str | None = None) -> None:
        from massgen.runs.loading import load

        self.worker = Worker(load(config), Path(out), scorer_spec, Path(replay) if replay else None)

    async def ready(self) -> str | None:
        """None when the backends are built, else the one-line reason they are not."""
        try:
            self.worker.members()
        except ConfigError as error:
            return error.render()
        return None

    async def run(self, job: Job) -> Row:
        return await self.worker.run(job)


async def _gather_refs(refs: list[Any]) -> None:
    import asyncio

    problems = [p for p in await asyncio.gather(*refs) if p]
    if problems:
        raise ConfigError(f"a Ray worker cannot build the team: {problems[0]}")
