"""The predecessor's published example configs (fixtures/predecessor, verbatim).

Configs that use only what we support load unchanged; the others fail naming the first
key we do not support, so a user knows exactly what to remove.
"""

from pathlib import Path

import pytest

from massgen.config import load_config
from massgen.core.errors import ConfigError

FIXTURES = Path(__file__).parent / "fixtures" / "predecessor"


def test_two_vllm_agents_load():
    config = load_config(FIXTURES / "two_qwen_vllm.yaml")
    assert [a.id for a in config.agents] == ["qwen1", "qwen2"]
    assert config.agents[1].backend.base_url == "http://localhost:8000/v1"
    assert config.ui.display_type == "rich_terminal"


def test_single_agent_form_loads():
    config = load_config(FIXTURES / "lmstudio.yaml")
    (agent,) = config.agents
    assert (agent.id, agent.backend.type) == ("Qwen3-4b", "lmstudio")
    assert agent.system_message.startswith("You are a helpful AI assistant")
    assert config.ui.display_type == "simple"


def test_mixed_chatcompletion_team_keeps_sampling_params():
    config = load_config(FIXTURES / "gpt5nano_glm_qwen.yaml")
    glm = config.agents[1].backend
    assert (glm.model, glm.temperature, glm.top_p) == ("glm-4.5-air", 0.7, 0.7)


def test_textual_display_type_is_accepted():
    config = load_config(FIXTURES / "single_atlascloud.yaml")
    assert config.ui.display_type == "textual_terminal"


def test_the_predecessors_mcp_servers_list_loads():
    config = load_config(FIXTURES / "gemini_mcp_example.yaml")
    (server,) = config.agents[0].backend.mcp_servers
    assert (server.name, server.type, server.command) == ("weather", "stdio", "npx")
    assert server.args == ("-y", "@fak111/weather-mcp")


@pytest.mark.parametrize(
    ("fixture", "key_path"),
    [
        ("restart_test_controlled.yaml", "orchestrator.snapshot_storage"),
        ("gpt5mini_cc_fs_context_path.yaml", "agents[0].backend.text"),
    ],
)
def test_configs_using_features_we_lack_name_the_key(fixture, key_path):
    with pytest.raises(ConfigError) as caught:
        load_config(FIXTURES / fixture)
    assert str(caught.value) == (
        f"{FIXTURES / fixture}: `{key_path}` is not supported by this version of massgen yet. "
        "Remove it to run this config"
    )


def test_the_remaining_unsupported_keys_of_a_fixture_are_each_named(tmp_path):
    # Removing the first unsupported key reveals the next one, never a silent skip.
    text = (FIXTURES / "restart_test_controlled.yaml").read_text()
    trimmed = tmp_path / "trimmed.yaml"
    trimmed.write_text(text.replace('  snapshot_storage: "snapshots"\n', ""))
    with pytest.raises(ConfigError) as caught:
        load_config(trimmed)
    assert "`orchestrator.agent_temporary_workspace` is not supported" in str(caught.value)


def test_the_predecessors_cwd_names_the_agents_workspace(tmp_path):
    text = (FIXTURES / "restart_test_controlled.yaml").read_text()
    trimmed = tmp_path / "trimmed.yaml"
    trimmed.write_text(text.split("orchestrator:")[0])
    assert load_config(trimmed).agents[0].backend.cwd == "workspace1"


def test_top_level_provider_params_point_at_extra_body():
    with pytest.raises(ConfigError) as caught:
        load_config(FIXTURES / "two_qwen_vllm_sglang.yaml")
    message = str(caught.value)
    assert ": agents[0].backend.chat_template_kwargs: unknown key." in message
    assert message.endswith("Provider-specific parameters go under `extra_body`")
