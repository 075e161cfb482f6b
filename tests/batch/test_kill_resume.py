"""The done-when: a 200-question batch killed halfway and rerun ends with exactly 200
results, and the fake provider's request log shows no finished question asked again.
With `--executor ray` on a local Ray the same holds, for 200 questions too, and the
results file is the same, up to order."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from batch_support import (
    asked,
    batch_process,
    presentations,
    rows,
    summing_agent,
    write_tasks,
    write_team,
)

from massgen.cli import main
from massgen.testing.fake_provider import FakeProvider

pytestmark = pytest.mark.usefixtures("in_tmp")


def kill_halfway(cwd: Path, out: Path, argv: list[str], at: int, within: float = 240) -> None:
    proc = batch_process(cwd, *argv)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "results.jsonl").exists() and len(rows(out)) >= at:
            break
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()[1]
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def settled(fake: FakeProvider, quiet: float = 1.5, within: float = 60) -> int:
    """The request count once no request has come for `quiet` seconds. A killed Ray
    driver's actors live on until Ray's reaper stops them and may finish what they had in
    hand, unrecorded (in-flight work is dropped, so those questions run again)."""
    deadline = time.monotonic() + within
    seen = len(fake.requests)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        if len(fake.requests) == seen:
            break
        seen = len(fake.requests)
    return seen


def killed_and_rerun(tmp_path: Path, count: int, *extra: str) -> tuple[list[dict], FakeProvider]:
    with FakeProvider(summing_agent) as fake:
        tasks = write_tasks(tmp_path / "tasks.jsonl", count)
        team = write_team(tmp_path / "team.json", fake.base_url)
        out = tmp_path / "out"
        argv = [str(tasks), "--config", str(team), "--out", str(out), "--concurrency", "8", *extra]
        kill_halfway(tmp_path, out, argv, at=count // 2)
        kept = {row["id"] for row in rows(out)}
        assert count // 2 <= len(kept) < count
        before = settled(fake)
        assert main(["batch", *argv]) == 0
        asked_again = {asked(body) for body in fake.requests[before:]}
        final = rows(out)
        # exactly `count` results, one per question
        assert len(final) == count and len({row["id"] for row in final}) == count
        assert all(row["status"] == "ok" and row["score"] == 1.0 for row in final)
        # no question with a result was asked again; each other one was presented once more
        assert not asked_again & kept
        rerun = presentations(fake.requests[before:])
        assert set(rerun) == {f"q{i}" for i in range(count)} - kept
        assert set(rerun.values()) == {1}
    return final, fake


def same_results(a: list[dict], b: list[dict]) -> None:
    def comparable(found: list[dict]) -> set[tuple]:
        return {(r["id"], r["method"], r["answer"], r["status"], r["score"]) for r in found}

    assert comparable(a) == comparable(b)


def test_a_killed_200_question_batch_resumes_without_asking_twice(tmp_path):
    killed_and_rerun(tmp_path, 200)


def test_on_ray_a_killed_driver_resumes_and_gives_the_same_results(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    count = 200
    local = tmp_path / "local"
    local.mkdir()
    with FakeProvider(summing_agent) as fake:
        tasks = write_tasks(local / "tasks.jsonl", count)
        team = write_team(local / "team.json", fake.base_url)
        argv = ["batch", str(tasks), "--config", str(team), "--out", str(local / "out")]
        assert main(argv) == 0
    on_ray = tmp_path / "ray"
    on_ray.mkdir()
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a local Ray, started by the driver
    final, _ = killed_and_rerun(on_ray, count, "--executor", "ray", "--ray-actors", "2")
    same_results(rows(local / "out"), final)
