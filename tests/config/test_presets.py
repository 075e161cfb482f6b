"""`@examples/NAME` resolves by exact name; the shipped presets all load."""

from pathlib import Path

import pytest

from massgen.config import example_text, list_examples, load_config, presets, resolve_config_arg
from massgen.core.errors import ConfigError

PROVIDERS = [
    "vllm", "sglang", "lmstudio", "ollama", "openrouter", "groq", "together", "cerebras",
    "fireworks",
]  # fmt: skip


def test_all_presets_are_listed_with_their_first_comment_line():
    listed = dict(list_examples())
    expected = {"single_agent", "three_agents", *(f"providers/{p}" for p in PROVIDERS)}
    assert expected <= set(listed)
    for name, description in listed.items():
        first_line = example_text(name).splitlines()[0]
        assert first_line == f"# {description}", name
        assert description


@pytest.mark.parametrize("name", [n for n, _ in list_examples()])
def test_every_preset_loads_without_any_environment(name):
    config = load_config(resolve_config_arg(f"@examples/{name}"))
    assert all(agent.backend.model for agent in config.agents)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_provider_presets_use_their_profile_type(provider):
    config = load_config(resolve_config_arg(f"@examples/providers/{provider}"))
    assert config.agents[0].backend.type == provider


def test_three_agents_differ_in_temperature():
    config = load_config(resolve_config_arg("@examples/three_agents"))
    temperatures = [a.backend.temperature for a in config.agents]
    assert len(config.agents) == 3
    assert len(set(temperatures)) == 3


def test_the_math_preset_is_the_qwen_team_with_its_python_blocks_run():
    # docs/quality.md compares the two as one team with and without the tool.
    plain = load_config(resolve_config_arg("@examples/local_qwen"))
    math = load_config(resolve_config_arg("@examples/local_qwen_math"))
    assert math.agents == plain.agents
    assert math.orchestrator.run_python_blocks and not plain.orchestrator.run_python_blocks
    tool = {"run_python_blocks"}
    settings = math.orchestrator.model_dump(exclude=tool)
    assert settings == plain.orchestrator.model_dump(exclude=tool)


def test_local_presets_follow_the_override_variables(monkeypatch):
    monkeypatch.setenv("MASSGEN_BASE_URL", "http://gpu:9000/v1")
    monkeypatch.setenv("MASSGEN_MODEL", "my-model")
    backend = load_config(resolve_config_arg("@examples/single_agent")).agents[0].backend
    assert (backend.base_url, backend.model) == ("http://gpu:9000/v1", "my-model")


def test_example_by_relative_name_and_by_unique_stem():
    by_name = resolve_config_arg("@examples/providers/groq")
    assert by_name == resolve_config_arg("@examples/groq")
    assert by_name == resolve_config_arg("@examples/providers/groq.yaml")
    assert by_name.as_posix().endswith("configs/providers/groq.yaml")


@pytest.mark.parametrize("partial", ["agent", "three", "providers/gr", "single"])
def test_substrings_never_match(partial):
    with pytest.raises(ConfigError) as caught:
        resolve_config_arg(f"@examples/{partial}")
    assert str(caught.value).startswith(f"no example named {partial!r}.")


def test_unknown_example_lists_close_matches():
    with pytest.raises(ConfigError) as caught:
        resolve_config_arg("@examples/three_agent")
    message = str(caught.value)
    assert message.startswith(
        "no example named 'three_agent'. Close matches: `@examples/three_agents`"
    )
    assert message.endswith(". Run `massgen --list-examples` to see them all")


def test_close_matches_also_come_from_file_stems():
    with pytest.raises(ConfigError) as caught:
        resolve_config_arg("@examples/groqq")
    assert "Close matches: `@examples/providers/groq`" in str(caught.value)


def test_a_stem_shared_by_two_examples_is_ambiguous(tmp_path, monkeypatch):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "team.yaml").write_text("# team\n")
    monkeypatch.setattr(presets, "examples_dir", lambda: tmp_path)
    with pytest.raises(ConfigError) as caught:
        resolve_config_arg("@examples/team")
    assert str(caught.value) == (
        "example name 'team' is ambiguous. Use one of `@examples/a/team`, `@examples/b/team`"
    )
    assert resolve_config_arg("@examples/a/team") == tmp_path / "a" / "team.yaml"


def test_paths_are_relative_to_cwd_and_expand_home(dirs):
    local = dirs.write("mine.yaml", "agents: []\n")
    assert resolve_config_arg("mine.yaml").resolve() == local
    in_home = dirs.home / "cfg" / "team.yaml"
    in_home.parent.mkdir()
    in_home.write_text("agents: []\n")
    assert resolve_config_arg("~/cfg/team.yaml") == in_home


def test_saved_agent_configs_by_name(dirs):
    saved = dirs.home / ".config" / "massgen" / "agents" / "research.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text("agents: []\n")
    assert resolve_config_arg("research") == saved
    assert resolve_config_arg("research.yaml") == saved


def test_a_path_wins_over_a_saved_agent_config(dirs):
    saved = dirs.home / ".config" / "massgen" / "agents" / "team.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text("agents: []\n")
    local = dirs.write("team.yaml", "agents: []\n")
    assert Path(resolve_config_arg("team.yaml")).resolve() == local


def test_nothing_found(dirs):
    with pytest.raises(ConfigError) as caught:
        resolve_config_arg("nowhere.yaml")
    assert str(caught.value) == (
        "nowhere.yaml: no such file. Check the path or use `massgen --list-examples`"
    )


def test_bare_example_name_gets_an_examples_hint(dirs):
    with pytest.raises(ConfigError) as caught:
        resolve_config_arg("three_agents")
    assert str(caught.value) == "three_agents: no such file. Did you mean `@examples/three_agents`?"


def test_example_text_is_the_file():
    text = example_text("single_agent")
    assert text.startswith("# One agent on a local OpenAI-compatible server")
    assert "type: chatcompletion" in text
