"""The predecessor's keys outside our schema (`config/predecessor/`): mapped to typed
fields, accepted with a note when they ask for nothing massgen lacks, or refused with the
key path and what to use instead."""

from __future__ import annotations

import pytest
import yaml

from massgen.config import load_config
from massgen.config.predecessor import translate
from massgen.config.schema import workspace_names
from massgen.core.errors import ConfigError

AGENT = "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-5\n"


def load(dirs, text: str):
    return load_config(dirs.write("c.yaml", text))


def test_text_and_reasoning_blocks_become_typed_parameters(dirs):
    text = AGENT + "      text: {verbosity: high}\n      reasoning: {effort: low, summary: auto}\n"
    backend = load(dirs, text).agents[0].backend
    assert (backend.verbosity, backend.reasoning_effort, backend.reasoning_summary) == (
        "high",
        "low",
        "auto",
    )
    assert backend.generation_params().verbosity == "high"


def test_an_unknown_sub_key_of_text_is_refused_by_its_path(dirs):
    message = dirs.config_error(AGENT + "      text: {format: {type: json}}\n")
    assert "agents[0].backend.text.format" in message and "`text.verbosity`" in message


def test_a_bad_verbosity_names_the_typed_key(dirs):
    assert "agents[0].backend.verbosity" in dirs.config_error(
        AGENT + "      text: {verbosity: loud}\n"
    )


def test_keys_massgen_does_its_own_way_load_with_a_note():
    raw = {
        "agents": [{"id": "a", "backend": {"type": "openai", "exclude_file_operation_mcps": True}}],
        "orchestrator": {"snapshot_storage": "snapshots", "agent_temporary_workspace": "temp"},
        "timeout_settings": {"initial_round_timeout_seconds": 600},
    }
    data, notes = translate(raw, "c.yaml")
    assert "snapshot_storage" not in data["orchestrator"]
    assert "exclude_file_operation_mcps" not in data["agents"][0]["backend"]
    paths = [note.path for note in notes]
    assert paths == [
        "agents[0].backend.exclude_file_operation_mcps",
        "orchestrator.snapshot_storage",
        "orchestrator.agent_temporary_workspace",
        "timeout_settings.initial_round_timeout_seconds",
    ]
    assert "has no effect here" in str(notes[1]) and ".massgen/" in str(notes[1])
    assert raw["orchestrator"]["snapshot_storage"] == "snapshots"  # the input is not changed


def test_a_key_set_to_off_asks_for_nothing_and_loads_without_a_note():
    raw = {
        "agents": [{"id": "a", "backend": {"type": "claude", "enable_tool_search": False}}],
        "orchestrator": {"dspy": False},
        "memory": {"enabled": False},
    }
    data, notes = translate(raw, "c.yaml")
    assert notes == [] and "memory" not in data
    assert data["orchestrator"] == {} and data["agents"][0]["backend"] == {"type": "claude"}


DOCKER = (
    "      enable_mcp_command_line: true\n"
    "      command_line_execution_mode: docker\n"
    "      command_line_docker_image: ghcr.io/massgen/mcp-runtime:latest\n"
    "      command_line_docker_enable_sudo: true\n"
    "      command_line_docker_credentials: {env_file: .env, env_vars_from_file: [OPENAI_API_KEY]}\n"
)


@pytest.mark.parametrize(
    ("network", "expected"), [("bridge", True), ("none", False), (None, False)]
)
def test_docker_execution_becomes_sandboxed_local_commands(dirs, network, expected):
    text = AGENT + DOCKER
    if network is not None:
        text += f"      command_line_docker_network_mode: {network}\n"
    backend = load(dirs, text).agents[0].backend
    assert backend.command_line.enabled
    assert (backend.command_line.execution_mode, backend.command_line.sandbox) == ("local", "auto")
    assert backend.command_line.network is expected
    assert backend.command_line.env == {}  # the container's credentials do not reach commands


def test_what_only_a_container_had_is_named_in_the_notes():
    raw = yaml.safe_load(AGENT + DOCKER)
    _, notes = translate(raw, "c.yaml")
    said = {note.path: str(note) for note in notes}
    assert set(said) == {
        "agents[0].backend.command_line_execution_mode (docker)",
        "agents[0].backend.command_line_docker_image",
        "agents[0].backend.command_line_docker_enable_sudo",
        "agents[0].backend.command_line_docker_credentials",
    }
    assert "OS sandbox" in said["agents[0].backend.command_line_execution_mode (docker)"]
    assert "never passed to commands" in said["agents[0].backend.command_line_docker_credentials"]


def test_agents_sharing_a_cwd_each_get_their_own_workspace(dirs):
    text = (
        "agents:\n"
        "  - {id: agent_a, backend: {type: openai, model: m, cwd: workspace}}\n"
        "  - {id: agent_b, backend: {type: openai, model: m, cwd: workspace}}\n"
        "  - {id: agent_c, backend: {type: openai, model: m, cwd: mine}}\n"
    )
    config = load(dirs, text)
    assert workspace_names(config.agents) == {
        "agent_a": "workspace_agent_a",
        "agent_b": "workspace_agent_b",
        "agent_c": "mine",
    }


def test_a_suffixed_workspace_that_collides_with_another_is_refused(dirs):
    text = (
        "agents:\n"
        "  - {id: a, backend: {type: openai, model: m, cwd: w}}\n"
        "  - {id: b, backend: {type: openai, model: m, cwd: w}}\n"
        "  - {id: c, backend: {type: openai, model: m, cwd: w_a}}\n"
    )
    assert "rename one `cwd`" in dirs.config_error(text)


def test_a_refusal_in_the_single_agent_form_names_agent(dirs):
    text = "agent:\n  id: a\n  backend:\n    type: ag2\n    group_config: {agents: []}\n"
    message = dirs.config_error(text)
    assert "`agent.backend.group_config`" in message and "AG2 group chats" in message


def test_ui_type_display_and_append_system_prompt_are_mapped(dirs):
    text = (
        "agents:\n  - id: a\n    system_message: Be brief.\n    append_system_prompt: Use tools.\n"
        "    backend:\n      type: vllm\n      model: q\n      top_k: 20\n"
        "display:\n  type: textual_terminal\n  logging_enabled: false\n"
    )
    config = load(dirs, text)
    assert config.agents[0].system_message == "Be brief.\n\nUse tools."
    assert config.agents[0].backend.extra_body == {"top_k": 20}
    assert (config.ui.display_type, config.ui.logging_enabled) == ("textual_terminal", False)


def test_mcp_server_security_has_no_effect_in_either_form():
    servers = {"fs": {"type": "stdio", "command": "x", "security": {"level": "high"}}}
    raw = {"agents": [{"id": "a", "backend": {"type": "openai", "mcp_servers": servers}}]}
    data, notes = translate(raw, "c.yaml")
    assert "security" not in data["agents"][0]["backend"]["mcp_servers"]["fs"]
    assert [n.path for n in notes] == ["agents[0].backend.mcp_servers[0].security"]


def test_claude_codes_own_tool_names_stay_claude_codes():
    """Claude Code runs as itself: its names are the tools it gets and may not use; MCP
    names stay massgen's MCP filters; an allowed Bash is also `execute_command`."""
    backend = {
        "type": "claude_code",
        "cwd": "ws",
        "allowed_tools": ["Read", "Write", "Bash", "mcp__discord__send"],
        "disallowed_tools": ["WebFetch", "mcp__discord__delete"],
        "permission_mode": "plan",
    }
    data, notes = translate({"agents": [{"id": "a", "backend": backend}]}, "c.yaml")
    out = data["agents"][0]["backend"]
    assert out["claude_code_tools"] == ["Read", "Write", "Bash"]
    assert out["claude_code_disallowed_tools"] == ["WebFetch"]
    assert out["allowed_tools"] == ["mcp__discord__send"]
    assert out["exclude_tools"] == ["mcp__discord__delete"]
    assert out["enable_mcp_command_line"] is True
    assert out["permission_mode"] == "plan"
    assert notes == []


def test_the_clis_mapped_onto_an_api_get_our_tools_for_theirs():
    backend = {
        "type": "codex",
        "cwd": "ws",
        "allowed_tools": ["Read", "Bash"],
        "disallowed_tools": ["WebFetch"],
        "permission_mode": "bypassPermissions",
    }
    data, notes = translate({"agents": [{"id": "a", "backend": backend}]}, "c.yaml")
    out = data["agents"][0]["backend"]
    assert "allowed_tools" not in out and "permission_mode" not in out
    assert out["enable_mcp_command_line"] is True  # an allowed Bash is execute_command
    assert [n.path for n in notes] == [
        "agents[0].backend.permission_mode",
        "agents[0].backend.allowed_tools (Read, Bash)",
        "agents[0].backend.disallowed_tools (WebFetch)",
    ]


def test_claude_codes_keys_on_another_backend_are_a_clear_error(dirs):
    text = "agents:\n  - id: a\n    backend: {type: openai, model: m, max_turns: 3}\n"
    with pytest.raises(ConfigError) as caught:
        load(dirs, text)
    assert "`max_turns` configure Claude Code" in str(caught.value)
    assert "type: claude_code" in str(caught.value)


def test_the_older_timeout_block_is_timeout_settings(dirs):
    config = load(dirs, AGENT + "timeout:\n  orchestrator_timeout_seconds: 60\n")
    assert config.timeout_settings.orchestrator_timeout_seconds == 60


@pytest.mark.parametrize(
    ("value", "ours"), [("checklist_gated", "strict"), ("roi", "balanced"), ("lenient", "lenient")]
)
def test_later_voting_sensitivities_are_read_as_the_nearest_of_ours(dirs, value, ours):
    text = AGENT + f"orchestrator:\n  voting_sensitivity: {value}\n"
    assert load(dirs, text).orchestrator.voting_sensitivity == ours
    _, notes = translate(yaml.safe_load(text), "c.yaml")
    said = [str(n) for n in notes]
    if value != ours:
        assert said == [
            f"`orchestrator.voting_sensitivity ({value})` is read as `{ours}`: agents vote with "
            f"the `{ours}` bar; the predecessor's scoring machinery for `{value}` is not part "
            "of this version"
        ]
    else:
        assert said == []


def test_direct_mcp_servers_has_no_effect_every_server_is_direct():
    servers = [{"name": "logfire", "type": "stdio", "command": "x"}]
    backend = {"type": "openai", "mcp_servers": servers, "direct_mcp_servers": ["logfire"]}
    data, notes = translate({"agents": [{"id": "a", "backend": backend}]}, "c.yaml")
    assert "direct_mcp_servers" not in data["agents"][0]["backend"]
    assert [str(n) for n in notes] == [
        "`agents[0].backend.direct_mcp_servers` has no effect here: every MCP server's "
        "tools are offered to the model directly, as function calls"
    ]


def test_anthropic_reasoning_switch_maps_to_the_thinking_budget(dirs):
    claude = "agents:\n  - id: a\n    backend:\n      type: claude\n      model: m\n"
    off = load(dirs, claude + "      reasoning: {type: disabled}\n").agents[0].backend
    assert off.thinking_budget is None
    on = claude + "      reasoning: {type: enabled, budget_tokens: 2048}\n"
    assert load(dirs, on).agents[0].backend.thinking_budget == 2048


def test_orchestrator_keys_the_predecessor_only_warned_about_load_with_a_note():
    raw = {"agents": [{"id": "a", "backend": {"type": "openai"}}]}
    raw["orchestrator"] = {"type": "sequential", "max_turns": 5}
    data, notes = translate(raw, "c.yaml")
    assert data["orchestrator"] == {}
    assert [n.path for n in notes] == ["orchestrator.type", "orchestrator.max_turns"]
    assert all("it warned about it and ran without it" in str(n) for n in notes)


def test_the_same_note_for_several_agents_is_one_line_naming_them():
    from massgen.config.predecessor import grouped

    docker = {"type": "openai", "command_line_docker_image": "img"}
    raw = {"agents": [{"id": i, "backend": dict(docker)} for i in "abc"]}
    raw["agents"][2]["backend"]["websocket_mode"] = True
    lines = grouped(translate(raw, "c.yaml")[1])
    assert lines[0].startswith(
        "`agents[*].backend.command_line_docker_image` (agents 0, 1, 2) has no effect here: "
        "there is no container image"
    )
    assert lines[1].startswith("`agents[2].backend.websocket_mode` has no effect here")
    assert len(lines) == 2
