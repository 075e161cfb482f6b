"""One job of a batch and the worker that does it, the same in-process and in a Ray actor.

A job is a team run on one question (a normal `TeamRun`, with its own log directory), one
member alone with one call (`single:<agent>`), or `k` samples from one member with a
majority vote on the extracted answers (`self-consistency`). Baseline calls go through the
member's own backend, built once per worker as `team.build` builds it for a team run, so
they are real calls with counted tokens and the member's system message and parameters.
The worker returns a row; scoring and writing are the driver's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.batch import store
from massgen.batch.scoring import scorer
from massgen.core.types import Message, Request, TextChunk, Usage

if TYPE_CHECKING:
    from massgen.coordination.agent import Member
    from massgen.runs.loading import LoadedConfig

TEAM, SC = "team", "self-consistency"
SINGLE = "single:"
SC_TEMPERATURE = 0.7  # when the member samples greedily: k equal samples would vote on one


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    question: str
    method: str  # "team", "single:<agent>" or "self-consistency"
    agent: str | None = None  # the member of a baseline
    k: int = 1  # samples, for self-consistency


def run_dir(out: Path, task_id: str) -> Path:
    """`out/runs/<id>`: the id made safe for a file name, with a hash so two ids never meet."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id)[:60].strip("._") or "task"
    digest = hashlib.sha256(task_id.encode()).hexdigest()[:8]
    return out / "runs" / f"{safe}-{digest}"


def with_agreement(loaded: LoadedConfig, equivalence: str) -> LoadedConfig:
    """The team judges its first answers' agreement as the batch's scorer reads answers
    (`numeric` for GSM8K), unless the config sets `orchestrator.agreement` itself."""
    settings = loaded.config.orchestrator
    if "agreement" in settings.model_fields_set:
        return loaded
    settings = settings.model_copy(update={"agreement": equivalence})
    return replace(loaded, config=loaded.config.model_copy(update={"orchestrator": settings}))


def baseline_journal(out: Path, task_id: str, method: str) -> Path:
    """Where a baseline job journals its model responses (`backends/replay.py`)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", method)
    return run_dir(out, task_id) / f"responses-{safe}.jsonl"


class Worker:
    """Runs jobs for one config. Holds the members' backends for baseline calls (their
    clients and, for the local backend, the loaded model) until `aclose`. `replay`: the
    --out of a recorded batch, whose jobs' responses answer this one's (`batch/replay.py`)."""

    def __init__(
        self, loaded: LoadedConfig, out: Path, scorer_spec: str, replay: Path | None = None
    ) -> None:
        chosen = scorer(scorer_spec)
        self.loaded, self.out, self.replay = with_agreement(loaded, chosen.equivalence), out, replay
        self.extract = chosen.extract
        self._members: dict[str, Member] | None = None
        self._recorded = store.read_rows(replay) if replay is not None else {}

    def members(self) -> dict[str, Member]:
        """Built on first use. Raises ConfigError (a missing key, ...)."""
        if self._members is None:
            from massgen.runs import members as team

            loaded = self.loaded
            built = team.build(
                loaded.config, source=loaded.source, single=loaded.single, env=loaded.env
            )
            self._members = {member.id: member for member in built}
        return self._members

    async def aclose(self) -> None:
        for member in (self._members or {}).values():
            with contextlib.suppress(Exception):
                await member.backend.aclose()
        self._members = None

    async def run(self, job: Job) -> dict[str, Any]:
        """The job's row: never raises for a failed job (status "failed" says why), only
        for cancellation."""
        started = time.monotonic()
        calls = Calls()
        try:
            row = await self._dispatch(job, calls)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            text = " ".join(str(error).split())[:300] or type(error).__name__
            row = {"answer": "", "status": "failed", "error": text, "tokens": 0, "cost": None}
        seconds = time.monotonic() - started
        recorded = self._recorded.get((job.id, job.method))
        if recorded is not None and calls.replayed and not calls.live:
            seconds = recorded.get("seconds", seconds)  # the recording's answer, and its time
        row = {"id": job.id, "method": job.method, **row, "seconds": seconds}
        return {**row, "calls": calls.counts()}  # the driver files the calls apart

    def _python(self, member: Member) -> bool:
        """Its Python blocks run, as they would in the team (`run_python_blocks`)."""
        settings = self.loaded.config.orchestrator
        return (
            settings.run_python_blocks and settings.free_text_actions and member.structured_actions
        )

    async def _dispatch(self, job: Job, calls: Calls) -> dict[str, Any]:
        if job.method == TEAM:
            return await self._team(job, calls)
        member, tape = self._taped(job)
        try:
            if job.method == SC:
                return await self._self_consistency(member, job)
            return await self._single(member, job)
        finally:
            calls.add(tape.live, tape.replayed)
            tape.close()

    def _taped(self, job: Job) -> tuple[Member, Any]:
        """The job's member with its backend on a tape of its own: journalled beside the
        question's team run, answered from the recorded batch's journal of this job or,
        for a single call, of the question's team run."""
        from massgen.backends.replay import JOURNAL, Tape, borrow, read_record
        from massgen.runs import replaying

        member = self.members()[job.agent or ""]
        record = None
        if self.replay is not None:
            source = baseline_journal(self.replay, job.id, job.method)
            record = read_record(source.parent, source.name) if source.is_file() else None
            team = run_dir(self.replay, job.id) / "team"
            if (team / JOURNAL).is_file():  # a single's call is its member's first answer
                record = borrow(record, read_record(team))
        tape = Tape(baseline_journal(self.out, job.id, job.method), record)
        return replaying.attach([member], self.loaded.config.agents, tape)[0], tape

    async def _team(self, job: Job, calls: Calls) -> dict[str, Any]:
        from massgen.api import TeamRun
        from massgen.backends.replay import JOURNAL

        log_dir = run_dir(self.out, job.id) / "team"
        source = run_dir(self.replay, job.id) / "team" if self.replay is not None else None
        replay = source if source is not None and (source / JOURNAL).is_file() else None
        run = TeamRun(self.loaded, job.question, log_dir=log_dir, replay=replay)
        result = await run.execute()
        calls.add(result.live_calls, result.replayed_calls)
        row = {
            "answer": result.answer,
            "status": str(result.status),
            "reason": result.reason,
            "winner": result.winner,
            "tokens": result.total_usage.total_tokens,
            "cost": result.total_cost_usd,
            # Relative to --out: the same wherever the batch lies (and in its replays).
            "log_dir": str(log_dir.relative_to(self.out)) if result.log_dir else None,
        }
        if not result.ok:  # why, in the row: the agents' own errors say more than the status
            failures = "; ".join(f"{a}: {e}" for a, e in result.failed_agents.items())
            row["error"] = " ".join(f"{result.reason}. {failures}".split())[:300]
        return row

    async def _single(self, member: Member, job: Job) -> dict[str, Any]:
        text, usage = await _call(member, job.question, member.params, python=self._python(member))
        return {
            "answer": text,
            "status": "ok",
            "winner": member.id,
            "tokens": usage.total_tokens,
            "cost": member.price(usage) if member.price else None,
        }

    async def _self_consistency(self, member: Member, job: Job) -> dict[str, Any]:
        python = self._python(member)
        calls = [
            _call(member, job.question, _sample_params(member, i), python=python)
            for i in range(job.k)
        ]
        samples = await asyncio.gather(*calls)
        texts = [text for text, _ in samples]
        usage = sum((u for _, u in samples), Usage())
        answer, votes = majority(texts, self.extract)
        return {
            "answer": answer,
            "status": "ok",
            "winner": member.id,
            "k": job.k,
            "votes": votes,
            "tokens": usage.total_tokens,
            "cost": member.price(usage) if member.price else None,
        }


class Calls:
    """A job's model calls: made live, and answered from a recorded batch."""

    def __init__(self) -> None:
        self.live = self.replayed = 0

    def add(self, live: int, replayed: int) -> None:
        self.live += live
        self.replayed += replayed

    def counts(self) -> dict[str, int]:
        return {"live_calls": self.live, "replayed_calls": self.replayed}


async def _call(
    member: Member, question: str, params: Any, *, python: bool = False
) -> tuple[str, Usage]:
    """One call to the member's backend: its system message, the question, its params.
    `python`: its ```python blocks run and it reads their output, as in the team
    (`coordination/python_blocks.py`), which costs a second call."""
    from massgen.coordination import python_blocks

    messages = [Message("system", member.system_message)] if member.system_message else []
    messages.append(Message("user", python_blocks.with_note(question) if python else question))
    if python:
        params = python_blocks.stopping(params)
    text, usage = await _complete(member, messages, params)
    if python and (code := python_blocks.code_of(text)):
        spent = [usage]

        async def ask(note: str) -> str:
            asked = [*messages, Message("assistant", text), Message("user", note)]
            more, used = await _complete(member, asked, params)
            spent.append(used)
            return more

        text = await python_blocks.finished(text, code, ask, lambda event: None, member.id)
        usage = sum(spent, Usage())
    return text.strip(), usage


async def _complete(member: Member, messages: list[Message], params: Any) -> tuple[str, Usage]:
    request = Request(tuple(messages), params=params)
    text: list[str] = []
    usage = Usage()
    async for event in member.backend.stream(request):
        if isinstance(event, TextChunk):
            text.append(event.text)
        elif isinstance(event, Usage):
            usage = usage + event
    return "".join(text), usage


def _sample_params(member: Member, index: int) -> Any:
    params = member.params
    temperature = params.temperature if params.temperature else SC_TEMPERATURE
    seed = None if params.seed is None else params.seed + index
    return replace(params, temperature=temperature, seed=seed)


def majority(texts: Sequence[str], extract: Any) -> tuple[str, int]:
    """The first sample whose extracted answer is the most common (ties: the value seen
    first), and its vote count. Samples with nothing extracted do not vote."""
    values = [extract(text) for text in texts]
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return (texts[0] if texts else ""), 0
    top = max(counts.values())
    winner = next(v for v in values if v is not None and counts[v] == top)
    return texts[values.index(winner)], top
