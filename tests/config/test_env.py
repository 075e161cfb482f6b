"""`.env` loading order and default-config discovery."""

import os

from massgen.config import find_default_config, load_config, load_env_files


def home_env(dirs, text: str) -> None:
    path = dirs.home / ".config" / "massgen" / ".env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_home_env_file_is_loaded(dirs):
    home_env(dirs, "ONLY_IN_HOME=from-home\n")
    load_env_files()
    assert os.environ["ONLY_IN_HOME"] == "from-home"


def test_project_env_wins_over_home_env(dirs):
    home_env(dirs, "SHARED_KEY=from-home\nHOME_ONLY=h\n")
    dirs.write(".env", "SHARED_KEY=from-project\n")
    loaded = load_env_files()
    assert os.environ["SHARED_KEY"] == "from-project"
    assert os.environ["HOME_ONLY"] == "h"
    assert loaded == [dirs.home / ".config" / "massgen" / ".env", dirs.work / ".env"]


def test_real_environment_wins_over_both(dirs, monkeypatch):
    monkeypatch.setenv("SHARED_KEY", "from-shell")
    home_env(dirs, "SHARED_KEY=from-home\n")
    dirs.write(".env", "SHARED_KEY=from-project\n")
    load_env_files()
    assert os.environ["SHARED_KEY"] == "from-shell"


def test_loading_twice_changes_nothing(dirs):
    dirs.write(".env", "TWICE_KEY=v1\n")
    load_env_files()
    load_env_files()
    assert os.environ["TWICE_KEY"] == "v1"


def test_a_later_project_env_replaces_values_from_an_earlier_one(dirs, tmp_path, monkeypatch):
    dirs.write(".env", "PROJECT_KEY=first\n")
    load_env_files()
    other = tmp_path / "other"
    other.mkdir()
    (other / ".env").write_text("PROJECT_KEY=second\n")
    load_env_files(cwd=other)
    # Came from a .env file, not the user's shell, so the newer file may replace it.
    assert os.environ["PROJECT_KEY"] == "second"


def test_explicit_dirs_are_used_instead_of_cwd_and_home(dirs, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".config" / "massgen").mkdir(parents=True)
    (elsewhere / ".config" / "massgen" / ".env").write_text("EXPLICIT_HOME=yes\n")
    dirs.write(".env", "NOT_READ=1\n")
    load_env_files(cwd=tmp_path, home=elsewhere)
    assert os.environ["EXPLICIT_HOME"] == "yes"
    assert "NOT_READ" not in os.environ


def test_load_config_reads_dotenv_before_expanding(dirs):
    dirs.write(".env", "MODEL_FROM_DOTENV=qwen3:4b\n")
    path = dirs.write(
        "c.yaml", "agent:\n  id: a\n  backend:\n    type: ollama\n    model: ${MODEL_FROM_DOTENV}\n"
    )
    assert load_config(path).agents[0].backend.model == "qwen3:4b"


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
