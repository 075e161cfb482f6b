"""`.env` loading order and default-config discovery. Loading never writes os.environ."""

import os

import pytest

from massgen.config import (
    config_from_dict,
    env_files,
    environment,
    find_default_config,
    load_config,
)
from massgen.runs.loading import load


def home_env(dirs, text: str) -> None:
    path = dirs.home / ".config" / "massgen" / ".env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_home_env_file_is_read(dirs):
    home_env(dirs, "ONLY_IN_HOME=from-home\n")
    assert environment()["ONLY_IN_HOME"] == "from-home"


def test_project_env_wins_over_home_env(dirs):
    home_env(dirs, "SHARED_KEY=from-home\nHOME_ONLY=h\n")
    dirs.write(".env", "SHARED_KEY=from-project\n")
    env = environment()
    assert env["SHARED_KEY"] == "from-project"
    assert env["HOME_ONLY"] == "h"
    assert env_files() == [dirs.home / ".config" / "massgen" / ".env", dirs.work / ".env"]


def test_real_environment_wins_over_both(dirs, monkeypatch):
    monkeypatch.setenv("SHARED_KEY", "from-shell")
    home_env(dirs, "SHARED_KEY=from-home\n")
    dirs.write(".env", "SHARED_KEY=from-project\n")
    assert environment()["SHARED_KEY"] == "from-shell"


def test_reading_twice_gives_the_same_and_a_later_project_env_its_own(dirs, tmp_path):
    dirs.write(".env", "PROJECT_KEY=first\n")
    assert environment()["PROJECT_KEY"] == environment()["PROJECT_KEY"] == "first"
    other = tmp_path / "other"
    other.mkdir()
    (other / ".env").write_text("PROJECT_KEY=second\n")
    assert environment(cwd=other)["PROJECT_KEY"] == "second"


def test_explicit_dirs_are_used_instead_of_cwd_and_home(dirs, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".config" / "massgen").mkdir(parents=True)
    (elsewhere / ".config" / "massgen" / ".env").write_text("EXPLICIT_HOME=yes\n")
    dirs.write(".env", "NOT_READ=1\n")
    env = environment(cwd=tmp_path, home=elsewhere)
    assert env["EXPLICIT_HOME"] == "yes"
    assert "NOT_READ" not in env


def test_load_config_reads_dotenv_before_expanding(dirs):
    dirs.write(".env", "MODEL_FROM_DOTENV=qwen3:4b\n")
    path = dirs.write(
        "c.yaml", "agent:\n  id: a\n  backend:\n    type: ollama\n    model: ${MODEL_FROM_DOTENV}\n"
    )
    assert load_config(path).agents[0].backend.model == "qwen3:4b"


OLLAMA = {"agent": {"id": "a", "backend": {"type": "ollama", "model": "${DOTENV_MODEL}"}}}


@pytest.mark.parametrize("given", ["file", "dict"])
def test_loading_leaves_os_environ_unchanged_and_the_shell_still_wins(dirs, monkeypatch, given):
    dirs.write(".env", "DOTENV_MODEL=from-dotenv\nSHELL_MODEL=from-dotenv\n")
    path = dirs.write("c.yaml", "agent:\n  id: a\n  backend:\n    type: ollama\n    model: x\n")
    before = dict(os.environ)
    loaded = load(str(path) if given == "file" else OLLAMA)
    assert dict(os.environ) == before
    assert "DOTENV_MODEL" not in os.environ
    assert loaded.env is not None and loaded.env["DOTENV_MODEL"] == "from-dotenv"
    assert config_from_dict(OLLAMA).agents[0].backend.model == "from-dotenv"
    monkeypatch.setenv("DOTENV_MODEL", "from-shell")
    assert config_from_dict(OLLAMA).agents[0].backend.model == "from-shell"


def test_a_key_in_dotenv_reaches_the_backend_without_entering_os_environ(dirs, monkeypatch):
    from massgen.runs.members import build as build_members

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    dirs.write(".env", "OPENAI_API_KEY=sk-from-dotenv\n")
    loaded = load({"agent": {"id": "a", "backend": {"type": "openai", "model": "gpt-5-mini"}}})
    members = build_members(loaded.config, single=True, env=loaded.env)
    assert members and "OPENAI_API_KEY" not in os.environ


def test_default_config_prefers_the_project(dirs):
    home_cfg = dirs.home / ".config" / "massgen" / "config.yaml"
    home_cfg.parent.mkdir(parents=True)
    home_cfg.write_text("agents: []\n")
    assert find_default_config() == home_cfg
    project_cfg = dirs.write(".massgen/config.yaml", "agents: []\n")
    assert find_default_config() == project_cfg
    assert find_default_config(cwd=dirs.work, home=dirs.home) == project_cfg


def test_no_default_config(dirs):
    assert find_default_config() is None
