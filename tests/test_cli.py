"""The CLI in-process: main(argv) -> exit code, against the loopback fake provider."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from massgen.cli import main
from massgen.permissions.sandbox import NoSandbox, select_sandbox
from massgen.testing.fake_provider import FakeProvider, Fault, Reply, cooperative_agent

pytestmark = pytest.mark.usefixtures("in_tmp")


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        yield provider


def team_file(tmp_path: Path, base_url: str, models=("m-a", "m-b", "m-c"), **orchestrator) -> Path:
    agents = [
        {
            "id": f"agent_{m}",
            "backend": {"type": "chatcompletion", "model": m, "base_url": base_url},
        }
        for m in models
    ]
    data = {"agents": agents, "orchestrator": orchestrator} if orchestrator else {"agents": agents}
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_help_lists_the_main_flags(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--config", "--automation", "--stream-events", "--orchestrator-timeout"):
        assert flag in out


def test_examples_are_listed_and_printed(capsys):
    assert main(["--list-examples"]) == 0
    listing = capsys.readouterr().out
    assert "@examples/three_agents" in listing and "@examples/providers/groq" in listing
    assert main(["--example", "three_agents"]) == 0
    assert "agents:" in capsys.readouterr().out


def test_validate_accepts_a_preset(capsys):
    assert main(["--validate", "@examples/three_agents"]) == 0
    assert "valid (3 agents)" in capsys.readouterr().out


def test_validate_notes_predecessor_keys_that_have_no_effect(tmp_path, capsys):
    config = tmp_path / "old.yaml"
    config.write_text(
        "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5}\n"
        "orchestrator:\n  snapshot_storage: snapshots\n"
    )
    assert main(["--validate", str(config)]) == 0
    out = capsys.readouterr().out
    assert "valid (1 agent)" in out
    assert "note: `orchestrator.snapshot_storage` has no effect here:" in out


BAD_CONFIGS = {
    "wrong type": (
        "agents:\n  - id: a\n    backend: {type: chatcompletion, model: m, base_url: http://x/v1, temperature: hot}\n",
        "agents[0].backend.temperature",
    ),
    "unknown key": (
        "agents:\n  - id: a\n    backend: {type: chatcompletion, model: m, base_url: http://x/v1, temprature: 0.2}\n",
        "Did you mean `temperature`",
    ),
    "missing model": (
        "agents:\n  - id: a\n    backend: {type: chatcompletion, base_url: http://x/v1}\n",
        "agents[0].backend.model",
    ),
    "malformed yaml": ("agents:\n  - id: a\n   backend: [\n", "line"),
    "unset variable": (
        "agents:\n  - id: a\n    backend: {type: chatcompletion, model: m, base_url: '${NOPE_NOT_SET}'}\n",
        "NOPE_NOT_SET",
    ),
    "unknown backend type": (
        "agents:\n  - id: a\n    backend: {type: chatcompletions, model: m}\n",
        "did you mean 'chatcompletion'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_is_one_clear_line_and_exit_1(case, tmp_path, capsys):
    text, expected = BAD_CONFIGS[case]
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert main(["--validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert str(path) in err and expected in err
    assert "Traceback" not in err


def test_missing_config_file(capsys):
    assert main(["--config", "nowhere.yaml", "q"]) == 1
    err = capsys.readouterr().err
    assert "nowhere.yaml" in err and err.count("\n") == 1


def test_automation_run_prints_parseable_lines_and_leaves_the_log(tmp_path, fake, capsys):
    config = team_file(tmp_path, fake.base_url)
    assert main(["--config", str(config), "--automation", "What is 2+2?"]) == 0
    out = capsys.readouterr().out
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    log_dir = Path(lines["LOG_DIR"])
    assert lines["STATUS"] == str(log_dir / "status.json")
    assert lines["ANSWER"].startswith("Final answer from")
    for name in (
        "events.jsonl",
        "coordination_events.json",
        "coordination_table.txt",
        "vote.json",
        "status.json",
        "execution_metadata.yaml",
        "final/answer.txt",
    ):
        assert (log_dir / name).exists(), name
    status = json.loads((log_dir / "status.json").read_text())
    assert status["is_complete"] is True
    votes = json.loads((log_dir / "vote.json").read_text())
    assert sum(votes["tally"].values()) == 3
    # Was the team worth it: how many independent first answers agreed, and the tokens
    # spent against one call.
    assert votes["agreement"] == "the 3 first answers all differ (exact)"
    worth = r"the 3 first answers all differ \(exact\); [\d,]+ tokens, \d+\.\dx one call"
    assert re.fullmatch(worth, lines["WORTH"])


@pytest.mark.skipif(
    isinstance(select_sandbox("auto"), NoSandbox), reason="this machine has no OS sandbox"
)
def test_a_verifier_decides_the_winner_and_automation_says_what_the_checks_said(
    tmp_path, fake, capsys
):
    config = team_file(tmp_path, fake.base_url)
    data = yaml.safe_load(config.read_text())
    data["verifier"] = {"command": "grep -q 'm-c answer'"}  # only agent_m-c's answers pass
    config.write_text(yaml.safe_dump(data))
    assert main(["--config", str(config), "--automation", "What is 2+2?"]) == 0
    out = capsys.readouterr().out
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    status = json.loads((Path(lines["LOG_DIR"]) / "status.json").read_text())
    assert status["results"]["winner"] == "agent_m-c"
    assert sorted(status["results"]["checks"].values()) == [
        "failed (exit 1)",
        "failed (exit 1)",
        "passed (exit 0)",
    ]
    assert status["results"]["final_check"] == "passed (exit 0)"
    worth = (
        r"the 3 first answers all differ \(exact\); checks: 1 passed, 2 failed, the selected "
        r"answer passed, the final text passed; [\d,]+ tokens, \d+\.\dx one call"
    )
    assert re.fullmatch(worth, lines["WORTH"])
    table = (Path(lines["LOG_DIR"]) / "coordination_table.txt").read_text()
    assert "✗ check of agent" in table and "✓ check of the final answer" in table
    votes = json.loads((Path(lines["LOG_DIR"]) / "vote.json").read_text())
    if votes["tally"][votes["winner_label"]] < max(votes["tally"].values()):
        # The voters (who ignore verdicts here) preferred a failing answer: overruled.
        assert votes["tie_break"].startswith("checked answers win: ")


def test_agreeing_first_answers_end_the_run_and_automation_says_so(tmp_path, capsys):
    def same_number(request):
        reply = cooperative_agent(request)
        if reply.tool_calls and reply.tool_calls[0][0] == "new_answer":
            model = request["model"]
            return Reply(tool_calls=[("new_answer", {"content": f"{model} says: it is 4."})])
        return reply

    with FakeProvider(same_number) as fake:
        config = team_file(tmp_path, fake.base_url, agreement="numeric")
        assert main(["--config", str(config), "--automation", "What is 2+2?"]) == 0
        calls = len(fake.requests)
    out = capsys.readouterr().out
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert calls == 3  # three first answers; no vote, no presentation
    worth = r"3 of 3 first answers agree \(numeric: 4\); [\d,]+ tokens, 3\.0x one call"
    assert re.fullmatch(worth, lines["WORTH"])
    assert lines["ANSWER"].endswith("says: it is 4.")


def test_stream_events_prints_one_json_event_per_line(tmp_path, fake, capsys):
    config = team_file(tmp_path, fake.base_url)
    assert main(["--config", str(config), "--stream-events", "--no-logs", "q"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("vote_cast") == 3 and "answer_published" in kinds
    assert not (tmp_path / ".massgen").exists()


def test_plain_output_shows_work_votes_winner_and_answer(tmp_path, fake, capsys):
    config = team_file(tmp_path, fake.base_url)
    assert main(["--config", str(config), "--no-display", "q"]) == 0
    out = capsys.readouterr().out
    assert "✓ new answer agent" in out and "✓ vote for agent" in out
    assert "winner: agent_m-" in out and "final answer" in out


def test_model_flag_runs_one_agent_without_a_config(fake, capsys):
    argv = ["--model", "solo", "--base-url", fake.base_url, "--automation", "--no-logs", "q"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "ANSWER: [solo answer 1]" in out
    assert len(fake.requests) == 1  # one agent answers once: no vote, no presentation


def test_output_file_gets_the_final_answer(tmp_path, fake, capsys):
    config = team_file(tmp_path, fake.base_url)
    target = tmp_path / "answer.md"
    assert main(["--config", str(config), "--no-logs", "--output-file", str(target), "q"]) == 0
    assert target.read_text().startswith("Final answer from")


def test_a_failing_provider_is_reported_and_the_rest_finish(tmp_path, capsys):
    def policy(request):
        if request["model"] == "broken":
            return Reply(fault=Fault.unauthorized("Incorrect API key provided: sk-***"))
        return cooperative_agent(request)

    with FakeProvider(policy) as fake:
        config = team_file(tmp_path, fake.base_url, models=("m-a", "m-b", "broken"))
        assert main(["--config", str(config), "--no-display", "--no-logs", "q"]) == 0
    out = capsys.readouterr().out
    assert "[agent_broken] ✗ failed:" in out and "Incorrect API key" in out
    assert "(degraded:" in out


def slow_model_stalls(seconds: float):
    """A policy: the model named "slow" stalls for `seconds`, the others cooperate."""

    def policy(request):
        if request["model"] == "slow":
            return Reply(fault=Fault(stall_seconds=seconds))
        return cooperative_agent(request)

    return policy


def test_deadline_exits_3_with_the_reason(tmp_path, capsys):
    with FakeProvider(slow_model_stalls(30)) as fake:
        config = team_file(tmp_path, fake.base_url, models=("m-a", "slow"))
        argv = ["--config", str(config), "--automation", "--orchestrator-timeout", "1", "q"]
        assert main(argv) == 3
    out = capsys.readouterr().out
    assert "STATUS_RESULT: timeout" in out and "ANSWER: [m-a answer" in out


def test_ctrl_c_keeps_what_was_decided_and_exits_4(tmp_path):
    with FakeProvider(slow_model_stalls(60)) as fake:
        config = team_file(tmp_path, fake.base_url, models=("m-a", "slow"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "massgen", "--config", str(config), "--automation", "q"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HOME": str(tmp_path / "home")},
        )
        log_dir = Path(proc.stdout.readline().split(": ", 1)[1].strip())
        deadline = time.monotonic() + 20
        while not list(log_dir.glob("agent_*/answer_1.txt")) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 4
    assert "interrupted" in err and str(log_dir) in err
    status = json.loads((log_dir / "status.json").read_text())
    assert status["finish_reason"] and "interrupt" in json.dumps(status)
    assert (log_dir / "final" / "answer.txt").read_text().strip().startswith("[m-a answer")


def test_automation_without_a_question_is_a_usage_error(capsys):
    assert main(["--automation"]) == 1
    assert "need a question" in capsys.readouterr().err


def test_silent_display_prints_only_the_final_answer(tmp_path, fake, capsys):
    config = team_file(tmp_path, fake.base_url)
    data = yaml.safe_load(config.read_text())
    data["ui"] = {"display_type": "silent"}
    config.write_text(yaml.safe_dump(data))
    assert main(["--config", str(config), "--no-logs", "q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Final answer from") and "vote" not in out


@pytest.mark.parametrize("resume", [False, True], ids=["new run", "--continue"])
def test_a_missing_api_key_is_a_config_error_with_or_without_continue(tmp_path, resume):
    from massgen.core.status import Status
    from massgen.sessions import SavedTurn, Session

    Session.new(base=tmp_path / ".massgen" / "sessions").save(
        SavedTurn(number=1, question="q", answer="a", status=Status.OK, reason="consensus")
    )
    config = tmp_path / "team.yaml"
    agent = {"id": "solo", "backend": {"type": "openai", "model": "gpt-5-mini"}}
    config.write_text(yaml.safe_dump({"agents": [agent]}))
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    argv = ["--config", str(config), "--no-logs", *(["--continue"] if resume else []), "again"]
    done = subprocess.run(
        [sys.executable, "-m", "massgen", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**env, "HOME": str(tmp_path / "home")},
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "OPENAI_API_KEY" in done.stderr and done.stderr.count("\n") == 1


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path):
    """`massgen --list-examples | head -1`: once the reader has gone, massgen stops
    quietly (a closed pipe is the reader's choice, not an error)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "massgen", "--list-examples"],
            cwd=tmp_path,
            env=env,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
