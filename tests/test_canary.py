"""Secrets never leak: distinctive fake keys, given in the environment, in `.env` files and
literally in the YAML, must not show up in anything a run leaves behind or prints.

Every mode runs as a real `massgen` process (one-shot, automation, stream-events, debug
logging, chat, a batch with baselines; each also with a provider that fails and echoes the
key it was sent, and faults mid-stream),
then every file under the run's directory and HOME is searched for every key; the only
files allowed to hold one are those the user wrote them into.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from massgen.testing.fake_provider import FakeProvider, Fault, Reply, cooperative_agent

CANARY = {
    "env": "sk-canary-ENV-7f3a9c1e5b80d2",
    "dotenv": "sk-canary-DOTENV-2d8e4f6a0c19",
    "yaml": "sk-canary-YAML-9b1c3e5d7f2a46",
    "home_dotenv": "sk-canary-HOME-4a6c8e0b2d7731",
    "openai_env": "sk-canary-OPENAI-5e7a9c1b3d55",
}
# The key each model's requests carry (the YAML below gives agent_y the literal key).
KEY_OF_MODEL = {"m-env": CANARY["env"], "m-dotenv": CANARY["dotenv"], "m-yaml": CANARY["yaml"]}


def leaking_policy(request: dict) -> Reply:
    """m-dotenv's provider refuses it, echoing the key it was sent, as real providers do
    ("Incorrect API key provided: sk-..."); m-yaml's provider fails mid-stream with the
    key in the error; m-env cooperates."""
    model = request["model"]
    if model == "m-dotenv":
        return Reply(fault=Fault.unauthorized(f"Incorrect API key provided: {CANARY['dotenv']}"))
    if model == "m-yaml" and request.get("stream"):
        return Reply(fault=Fault.server_error(f"upstream rejected key {CANARY['yaml']}"))
    return cooperative_agent(request)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".config" / "massgen").mkdir(parents=True)
    (home / ".config" / "massgen" / ".env").write_text(f"CANARY_HOME_KEY={CANARY['home_dotenv']}\n")
    (tmp_path / ".env").write_text(f"CANARY_DOTENV_KEY={CANARY['dotenv']}\n")
    tasks = [
        {"id": f"t{n}", "question": f"What is {n} + {n}?", "answer": str(2 * n)} for n in (1, 2)
    ]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return tmp_path


def write_team(project: Path, base_url: str) -> Path:
    def agent(name: str, model: str, key: str) -> dict:
        backend = {"type": "chatcompletion", "model": model, "base_url": base_url, "api_key": key}
        return {"id": name, "backend": backend}

    team = {
        "agents": [
            agent("agent_e", "m-env", "${CANARY_ENV_KEY}"),
            agent("agent_d", "m-dotenv", "${CANARY_DOTENV_KEY}"),
            agent("agent_y", "m-yaml", CANARY["yaml"]),
        ]
    }
    path = project / "team.yaml"
    path.write_text(yaml.safe_dump(team))
    return path


def massgen(project: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(project / "home"),
        "CANARY_ENV_KEY": CANARY["env"],
        "OPENAI_API_KEY": CANARY["openai_env"],
    }
    env.pop("MASSGEN_LOG_BASE_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "massgen", *argv],
        cwd=project,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


# The files the user wrote the keys into.
WRITTEN_BY_USER = {"team.yaml", ".env", "home/.config/massgen/.env"}

MODES = {
    "one-shot": ["--no-display", "q"],
    "automation": ["--automation", "q"],
    "stream-events": ["--stream-events", "q"],
    "debug log": ["--debug", "--automation", "q"],
    "chat": [],
    # A dataset, with both baselines: every member's backend called outside a team too.
    "batch": ["--out", ".massgen/batch", "--baselines", "single,self-consistency", "--sc-k", "2"],
}


def argv_of(mode: str, config: Path) -> list[str]:
    if mode == "batch":
        return ["batch", "tasks.jsonl", "--config", str(config), *MODES[mode]]
    return ["--config", str(config), *MODES[mode]]


@pytest.mark.parametrize("mode", MODES, ids=list(MODES))
@pytest.mark.parametrize("faults", [False, True], ids=["healthy", "failing providers"])
def test_no_key_appears_in_any_output_or_file(project, mode, faults):
    policy = leaking_policy if faults else cooperative_agent
    with FakeProvider(policy) as fake:
        config = write_team(project, fake.base_url)
        done = massgen(project, *argv_of(mode, config), stdin="q\n/quit\n")
        sent = {h.get("authorization", "") for h in fake.headers}
    # The keys did reach the provider (so the test is not vacuous)...
    assert {f"Bearer {KEY_OF_MODEL[m]}" for m in KEY_OF_MODEL} <= sent
    assert done.returncode in (0, 2), done.stderr
    if faults:
        assert "Incorrect API key provided" in done.stdout + done.stderr + _all_text(project)
    # ...and nowhere else.
    _assert_no_canary("stdout", done.stdout)
    _assert_no_canary("stderr", done.stderr)
    for path in sorted(project.rglob("*")):
        if path.is_file() and path.relative_to(project).as_posix() not in WRITTEN_BY_USER:
            _assert_no_canary(
                str(path.relative_to(project)), path.read_bytes().decode(errors="replace")
            )
    assert any((project / ".massgen").rglob("*")), "the run left no log to check"


def _all_text(project: Path) -> str:
    files = [p for p in (project / ".massgen").rglob("*") if p.is_file()]
    return "".join(p.read_bytes().decode(errors="replace") for p in files)


def _assert_no_canary(where: str, text: str) -> None:
    for name, key in CANARY.items():
        assert key not in text, f"the {name} key leaked into {where}"
        assert key[-12:] not in text, f"a part of the {name} key leaked into {where}"
