"""The setup wizard driven in a real terminal (a pty), and the runs that follow it.

The team is pointed at the loopback fake provider, so "the next run uses the config" is
seen from the fake's side: its requests carry the model the wizard was told.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dotenv import dotenv_values
from wizard_pty import CTRL_C, DOWN, ENTER, SPACE, Terminal

from massgen.runs.defaults import PROVIDERS
from massgen.testing.fake_provider import FakeProvider

MASSGEN = [sys.executable, "-m", "massgen"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".config" / "massgen").mkdir(parents=True)
    (home / ".config" / "massgen" / ".env").write_text("# mine\nOTHER_KEY=keep\n")
    return home


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    keys = {name for p in PROVIDERS for name in p.key_env}
    clean = {k: v for k, v in os.environ.items() if k not in keys and not k.startswith("MASSGEN")}
    return {**clean, "HOME": str(home), "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        yield provider


def leave_the_app(term: Terminal, timeout: float) -> None:
    """The run that follows opens the terminal app (the default on a terminal); once it
    says the run is done, q leaves it."""
    term.expect("done: q quits", timeout)
    term.send("q")


def choose_server_team(
    term: Terminal, url: str, model: str, *, agents_down: int, server_down: int
) -> None:
    """From the use-case question to the saved config: agents on one server. The provider
    list is the providers with keys, the built-in model, then a server."""
    term.expect("What will you use massgen for?")
    term.send(DOWN, ENTER)  # quick answers
    term.expect("How many agents?")
    term.send(*[DOWN] * agents_down, ENTER)
    term.expect("Same provider and model for every agent?")
    term.send("y")
    term.expect("All agents: provider")
    term.send(*[DOWN] * server_down, ENTER)
    term.expect("All agents: server URL")
    term.send(*["\x7f"] * 40)  # clear the suggested URL
    term.type(url)
    term.send(ENTER)
    term.expect("All agents: model name on that server")
    term.type(model)
    term.send(ENTER)
    term.expect("Save to ")
    term.send(ENTER)


def test_setup_saves_keys_and_a_team_that_the_next_run_uses(home, env, fake, tmp_path):
    with Terminal([*MASSGEN, "--setup"], env=env, cwd=str(tmp_path)) as term:
        term.expect("API keys found: none")
        term.expect("Enter API keys for")
        term.send(SPACE, ENTER)  # OpenAI, the first provider
        term.expect("OPENAI_API_KEY (empty to skip):")
        term.type("sk-wizard-123")
        term.send(ENTER)
        choose_server_team(term, fake.base_url, "wizard-model", agents_down=1, server_down=2)
        term.expect("Ask a first question now?")
        term.send(ENTER)  # no
        assert term.wait(30) == 0
        assert "sk-wizard-123" not in term.text  # the key was masked

    keys = home / ".config" / "massgen" / ".env"
    assert dotenv_values(keys) == {"OTHER_KEY": "keep", "OPENAI_API_KEY": "sk-wizard-123"}
    assert keys.read_text().startswith("# mine\n")
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    config = yaml.safe_load((home / ".config" / "massgen" / "config.yaml").read_text())
    assert len(config["agents"]) == 4
    assert config["orchestrator"]["final_answer_strategy"] == "winner_reuse"

    done = subprocess.run(
        [*MASSGEN, "What is 2+2?"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert {r["model"] for r in fake.requests} == {"wizard-model"}
    assert "no API keys found" not in done.stderr  # the saved team ran, not the default


def test_first_interactive_run_offers_setup_then_answers_with_the_new_team(
    home, env, fake, tmp_path
):
    with Terminal([*MASSGEN, "What is 2+2?"], env=env, cwd=str(tmp_path)) as term:
        term.expect("No configuration yet. Set up massgen now?")
        term.send(ENTER)
        term.expect("Enter API keys for")
        term.send(ENTER)  # none
        choose_server_team(term, fake.base_url, "first-run-model", agents_down=1, server_down=1)
        leave_the_app(term, 120)
        assert term.wait(120) == 0, term.text[-2000:]
    assert fake.requests and {r["model"] for r in fake.requests} == {"first-run-model"}
    assert (home / ".config" / "massgen" / "config.yaml").is_file()


def test_ctrl_c_in_the_wizard_changes_no_file(home, env, tmp_path):
    keys = home / ".config" / "massgen" / ".env"
    before = keys.read_bytes(), keys.stat().st_mtime_ns
    with Terminal([*MASSGEN, "What is 2+2?"], env=env, cwd=str(tmp_path)) as term:
        term.expect("Set up massgen now?")
        term.send(ENTER)
        term.expect("Enter API keys for")
        term.send(SPACE, ENTER)
        term.expect("OPENAI_API_KEY (empty to skip):")
        term.type("sk-never-saved")
        term.send(ENTER)
        term.expect("What will you use massgen for?")
        term.send(CTRL_C)
        assert term.wait(30) == 4
        term.expect("setup cancelled; no file was changed")
    assert (keys.read_bytes(), keys.stat().st_mtime_ns) == before
    assert sorted(p.name for p in keys.parent.iterdir()) == [".env"]


def test_not_now_runs_the_default_team_and_is_not_asked_again(home, env, tmp_path):
    # No keys: the default team is the built-in model, a real (short) run in the terminal.
    question = [*MASSGEN, "What is the capital of France?"]
    with Terminal(question, env=env, cwd=str(tmp_path)) as term:
        term.expect("Set up massgen now?")
        term.send(DOWN, ENTER)  # not now
        term.expect("no API keys found")
        leave_the_app(term, 180)
        assert term.wait(180) == 0, term.text[-2000:]
    assert not (home / ".config" / "massgen" / "config.yaml").exists()

    with Terminal(question, env=env, cwd=str(tmp_path)) as term:
        before_hint = term.expect("no API keys found")
        assert "Set up massgen now?" not in before_hint
