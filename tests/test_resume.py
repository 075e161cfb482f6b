"""`massgen --resume`: a run killed with SIGKILL continues from its journal, through the CLI
in subprocesses, against the loopback fake provider (its request log is the witness)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from massgen.record.journal import read_journal
from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent

MODELS = ("m-a", "m-b", "m-c")


def team_file(tmp_path: Path, base_url: str, models=MODELS, name="team.yaml") -> Path:
    agents = [
        {
            "id": f"agent_{m}",
            "backend": {"type": "chatcompletion", "model": m, "base_url": base_url},
        }
        for m in models
    ]
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"agents": agents, "orchestrator": {"seed": 11}}))
    return path


def massgen(tmp_path: Path, *argv: str, **popen) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "massgen", *argv],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(tmp_path / "home"), "PYTHONPATH": _root()},
        **popen,
    )


def _root() -> str:
    return str(Path(__file__).resolve().parents[1])


def journal_kinds(log_dir: Path) -> list[str]:
    path = log_dir / "events.jsonl"
    return [e.kind for e in read_journal(path)] if path.exists() else []


def wait_for(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def automation(out: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


class SlowThird:
    """Cooperative models; "m-c" takes its time while `slow` is set, so the run can be
    killed after the other two have answered."""

    def __init__(self) -> None:
        self.slow = threading.Event()

    def __call__(self, request) -> Reply:
        if request["model"] == "m-c" and self.slow.is_set():
            time.sleep(5)
        return cooperative_agent(request)


def first_answer_requests(requests, model: str) -> list[str]:
    """The message lists of requests from `model` that show no answer yet (the call that
    writes its first answer)."""
    found = []
    for body in requests:
        messages = json.dumps(body["messages"])
        if body["model"] == model and "answer 1]" not in messages:
            found.append(messages)
    return found


def test_a_run_killed_after_two_answers_resumes_without_repeating_them(tmp_path):
    policy = SlowThird()
    policy.slow.set()
    with FakeProvider(policy, latency=0.2) as fake:
        config = team_file(tmp_path, fake.base_url)
        first = massgen(tmp_path, "--config", str(config), "--automation", "What is 2+2?")
        log_dir = Path(first.stdout.readline().split(": ", 1)[1].strip())
        wait_for(lambda: journal_kinds(log_dir).count("answer_published") == 2)
        first.kill()  # SIGKILL: no cleanup, no RunFinished
        first.communicate(timeout=20)
        before = fake.requests
        policy.slow.clear()

        second = massgen(tmp_path, "--resume", "--automation")
        out, err = second.communicate(timeout=60)
        after = fake.requests[len(before) :]

    assert second.returncode == 0, err
    assert "resumed: 2 answers, 0 votes (attempt 2)" in err
    lines = automation(out)
    assert Path(lines["LOG_DIR"]) == log_dir  # the same log dir, a new attempt
    assert lines["STATUS_RESULT"] == "ok"
    decided = [m for m in MODELS if first_answer_requests(before, m)]
    journal = read_journal(log_dir / "events.jsonl")
    first_two = [e.agent for e in journal if e.kind == "answer_published"][:2]
    for agent in first_two:
        model = agent.removeprefix("agent_")
        assert model in decided
        assert first_answer_requests(after, model) == [], f"{model}'s answer was asked again"
    # The one call in flight (the third agent's first run) is redone, with the board of now.
    (third,) = {f"agent_{m}" for m in MODELS} - set(first_two)
    assert any(body["model"] == third.removeprefix("agent_") for body in after)

    table = (log_dir / "coordination_table.txt").read_text()
    assert "attempt 2: resumed" in table
    assert table.count("answer agent") == 2  # the two answers of attempt 1, none twice
    status = json.loads((log_dir / "status.json").read_text())
    assert status["is_complete"] is True

    # As good as a run that was never interrupted: same winner, same kind of answer.
    with FakeProvider(cooperative_agent, latency=0.0) as fake:
        config = team_file(tmp_path, fake.base_url, name="again.yaml")
        plain = massgen(tmp_path, "--config", str(config), "--automation", "What is 2+2?")
        plain_out, plain_err = plain.communicate(timeout=60)
    assert plain.returncode == 0, plain_err
    reference = automation(plain_out)
    assert lines["WINNER"] == reference["WINNER"]
    assert lines["ANSWER"].split(".")[0] == reference["ANSWER"].split(".")[0]


def test_resuming_with_another_team_is_refused_in_one_line(tmp_path):
    policy = SlowThird()
    policy.slow.set()
    with FakeProvider(policy) as fake:
        config = team_file(tmp_path, fake.base_url)
        first = massgen(tmp_path, "--config", str(config), "--automation", "q")
        log_dir = Path(first.stdout.readline().split(": ", 1)[1].strip())
        wait_for(lambda: journal_kinds(log_dir).count("answer_published") == 2)
        first.kill()
        first.communicate(timeout=20)
        policy.slow.clear()
        other = team_file(tmp_path, fake.base_url, models=("m-a", "m-b", "m-z"), name="o.yaml")
        refused = massgen(tmp_path, "--resume", str(log_dir), "--config", str(other))
        _out, err = refused.communicate(timeout=60)
    assert refused.returncode == 1
    assert err.count("\n") == 1 and "not the one the run started with" in err, err
    assert "Traceback" not in err


def test_nothing_to_resume_is_one_line_and_exit_1(tmp_path):
    done = massgen(tmp_path, "--resume")
    _out, err = done.communicate(timeout=60)
    assert done.returncode == 1
    assert err.count("\n") == 1 and "no interrupted run to resume" in err
