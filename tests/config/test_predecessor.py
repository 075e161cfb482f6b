"""The predecessor's published example configs (fixtures/predecessor, verbatim).

Configs that use only what we support load unchanged; the others fail naming the first
key we do not support, so a user knows exactly what to remove.
"""

from pathlib import Path

import pytest
import yaml

from massgen.config import load_config
from massgen.config.predecessor import translate
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


def test_a_config_using_a_feature_we_lack_names_the_key_and_why(tmp_path):
    text = (FIXTURES / "restart_test_controlled.yaml").read_text()
    file = tmp_path / "dspy.yaml"
    block = "  dspy: {enabled: true, optimizer: mipro}"  # DSPy's optimizers are not here
    file.write_text(text.replace("  skip_coordination_rounds: true", block))
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    assert str(caught.value) == (
        f"{file}: orchestrator.dspy.optimizer: "
        "not a key of the predecessor's `dspy` block. Remove it"
    )


def test_skip_coordination_rounds_with_restarts_loads():
    config = load_config(FIXTURES / "restart_test_controlled.yaml")
    assert config.orchestrator.skip_coordination_rounds
    assert config.orchestrator.coordination.max_orchestration_restarts == 2


def test_storage_keys_of_the_predecessor_load_with_a_note(tmp_path):
    # Without the refused keys, the rest (snapshot_storage, agent_temporary_workspace)
    # load, each with a note that says what massgen does instead.
    text = (FIXTURES / "restart_test_controlled.yaml").read_text()
    refused = ("skip_coordination_rounds", "restarts", "post_presentation", "coordination:")
    trimmed = tmp_path / "trimmed.yaml"
    trimmed.write_text(
        "\n".join(line for line in text.splitlines() if not any(k in line for k in refused))
    )
    load_config(trimmed)
    _, notes = translate(yaml.safe_load(trimmed.read_text()), str(trimmed))
    assert {n.path for n in notes} >= {
        "orchestrator.snapshot_storage",
        "orchestrator.agent_temporary_workspace",
    }


def test_the_responses_text_block_is_typed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "massgen/configs/resources/v0.0.21-example").mkdir(parents=True)
    config = load_config(FIXTURES / "gpt5mini_cc_fs_context_path.yaml")
    assert config.agents[0].backend.verbosity == "medium"


def test_the_predecessors_cwd_names_the_agents_workspace(tmp_path):
    text = (FIXTURES / "restart_test_controlled.yaml").read_text()
    trimmed = tmp_path / "trimmed.yaml"
    trimmed.write_text(text.split("orchestrator:")[0])
    assert load_config(trimmed).agents[0].backend.cwd == "workspace1"


def test_inference_server_params_go_to_extra_body():
    config = load_config(FIXTURES / "two_qwen_vllm_sglang.yaml")
    assert config.agents[0].backend.extra_body == {
        "top_k": 50,
        "chat_template_kwargs": {"enable_thinking": True},
    }
