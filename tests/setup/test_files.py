"""The files setup writes: a merged .env (0600) and a config.yaml."""

from __future__ import annotations

import stat

import yaml
from dotenv import dotenv_values

from massgen.setup import files


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_merge_keeps_other_keys_comments_and_order(tmp_path):
    env = tmp_path / ".env"
    env.write_text(
        "# my keys\nGROQ_API_KEY=gsk-old\n\nexport OTHER=keep me\nOPENAI_API_KEY=sk-old\n"
    )
    files.merge_env(env, {"OPENAI_API_KEY": "sk-new", "GEMINI_API_KEY": "g-1"})

    assert env.read_text() == (
        "# my keys\nGROQ_API_KEY=gsk-old\n\nexport OTHER=keep me\nOPENAI_API_KEY=sk-new\n"
        "GEMINI_API_KEY=g-1\n"
    )
    assert dotenv_values(env) == {
        "GROQ_API_KEY": "gsk-old",
        "OTHER": "keep me",
        "OPENAI_API_KEY": "sk-new",
        "GEMINI_API_KEY": "g-1",
    }
    assert mode(env) == 0o600


def test_merge_creates_the_file_and_its_directory_with_mode_0600(tmp_path):
    env = tmp_path / "home" / ".config" / "massgen" / ".env"
    files.merge_env(env, {"OPENAI_API_KEY": "sk-1"})
    assert env.read_text() == "OPENAI_API_KEY=sk-1\n" and mode(env) == 0o600


def test_merge_drops_a_second_line_that_would_override_the_new_value(tmp_path):
    env = tmp_path / ".env"
    env.write_text("A=1\nA=2\n")
    files.merge_env(env, {"A": "3"})
    assert env.read_text() == "A=3\n"


def test_values_that_need_quotes_read_back_exactly(tmp_path):
    env = tmp_path / ".env"
    tricky = 'sk with "quotes" # and \\ backslash'
    files.merge_env(env, {"K": tricky})
    assert dotenv_values(env)["K"] == tricky


def test_nothing_to_merge_touches_nothing(tmp_path):
    env = tmp_path / ".env"
    env.write_text("A=1\n")
    env.chmod(0o644)
    files.merge_env(env, {})
    assert env.read_text() == "A=1\n" and mode(env) == 0o644


def test_config_is_written_as_yaml_with_a_header(tmp_path):
    path = files.config_path(tmp_path)
    files.write_config(path, {"agents": [{"id": "a", "backend": {"type": "local"}}]}, header="hi")
    assert path.read_text().startswith("# hi\nagents:\n")
    assert yaml.safe_load(path.read_text())["agents"][0]["id"] == "a"
    assert mode(path) == 0o600
