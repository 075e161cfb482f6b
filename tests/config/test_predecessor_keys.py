"""The predecessor's keys outside our schema (`config/predecessor.py`): mapped to typed
fields, accepted with a note when they ask for nothing massgen lacks, or refused with the
key path and what to use instead."""

from __future__ import annotations

import pytest

from massgen.config import load_config
from massgen.config.predecessor import translate
from massgen.core.errors import ConfigError

AGENT = "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-5\n"


def load(dirs, text: str):
    return load_config(dirs.write("c.yaml", text))


def refusal(dirs, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(dirs, text)
    return str(caught.value)


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
    message = refusal(dirs, AGENT + "      text: {format: {type: json}}\n")
    assert "agents[0].backend.text.format" in message and "`text.verbosity`" in message


def test_a_bad_verbosity_names_the_typed_key(dirs):
    assert "agents[0].backend.verbosity" in refusal(dirs, AGENT + "      text: {verbosity: loud}\n")


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
        "agents": [{"id": "a", "backend": {"type": "openai", "enable_image_generation": False}}],
        "orchestrator": {"coordination": {"use_skills": False}},
        "memory": {"enabled": False},
    }
    data, notes = translate(raw, "c.yaml")
    assert notes == [] and "memory" not in data
    assert data["orchestrator"]["coordination"] == {}


def test_docker_execution_is_refused_pointing_at_the_command_tool(dirs):
    message = refusal(dirs, AGENT + "      command_line_execution_mode: docker\n")
    assert message.startswith(
        f"{dirs.work}/c.yaml: `agents[0].backend.command_line_execution_mode`"
    )
    assert "execute_command" in message and "sandbox" in message


def test_a_refusal_in_the_single_agent_form_names_agent(dirs):
    text = "agent:\n  id: a\n  backend:\n    type: openai\n    upload_files: [{file_path: x.pdf}]\n"
    message = refusal(dirs, text)
    assert "`agent.backend.upload_files`" in message and "context_paths" in message


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


def test_claude_codes_own_tool_names_become_our_tools():
    backend = {
        "type": "claude_code",
        "cwd": "ws",
        "allowed_tools": ["Read", "Write", "Bash", "mcp__discord__send"],
        "disallowed_tools": ["WebFetch", "mcp__discord__delete"],
    }
    data, notes = translate({"agents": [{"id": "a", "backend": backend}]}, "c.yaml")
    out = data["agents"][0]["backend"]
    assert out["allowed_tools"] == ["mcp__discord__send"]
    assert out["exclude_tools"] == ["mcp__discord__delete"]
    assert out["enable_mcp_command_line"] is True  # an allowed Bash is execute_command
    assert [n.path for n in notes] == [
        "agents[0].backend.allowed_tools (Read, Write, Bash)",
        "agents[0].backend.disallowed_tools (WebFetch)",
    ]
