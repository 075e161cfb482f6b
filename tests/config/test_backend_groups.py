"""A backend's nested groups (`config/backend_groups.py`): the flat keys users and the
predecessor's configs write load exactly as the nested form, and a wrong key, either way,
gets one error line naming the file, the key as written, and the fix."""

import pytest

from massgen.config import load_config

AGENT = "agents:\n  - id: a\n    backend:\n      type: chatcompletion\n      model: m\n"
SINGLE = "agent:\n  id: a\n  backend:\n    type: chatcompletion\n    model: m\n"


def backend(dirs, lines: str, head: str = AGENT):
    path = dirs.write("c.yaml", head + lines)
    return load_config(path).agents[0].backend


def error_for(dirs, lines: str, head: str = AGENT) -> str:
    return dirs.config_error(head + lines)


FLAT = """\
      enable_mcp_command_line: true
      command_line_sandbox: landlock
      command_line_network: true
      command_line_max_processes: 64
      command_line_allowed_commands: ["python.*"]
      command_line_env: {GITHUB_TOKEN: t}
"""
NESTED = """\
      command_line:
        enabled: true
        sandbox: landlock
        network: true
        max_processes: 64
        allowed_commands: ["python.*"]
        env: {GITHUB_TOKEN: t}
"""
MIXED = """\
      enable_mcp_command_line: true
      command_line_sandbox: landlock
      command_line:
        network: true
        max_processes: 64
        allowed_commands: ["python.*"]
        env: {GITHUB_TOKEN: t}
"""


def test_flat_nested_and_mixed_command_line_keys_load_to_the_same_config(dirs):
    flat, nested, mixed = (backend(dirs, lines) for lines in (FLAT, NESTED, MIXED))
    assert flat == nested == mixed
    group = flat.command_line
    assert (group.enabled, group.sandbox, group.network) == (True, "landlock", True)
    assert (group.max_processes, group.allowed_commands) == (64, ("python.*",))
    assert group.env == {"GITHUB_TOKEN": "t"}


def test_without_command_line_keys_the_group_has_its_safe_defaults(dirs):
    group = backend(dirs, "").command_line
    assert (group.enabled, group.sandbox, group.network) == (False, "auto", False)


def test_a_key_written_both_flat_and_nested_is_refused(dirs):
    lines = "      command_line_network: true\n      command_line: {network: false}\n"
    assert error_for(dirs, lines) == (
        "agents[0].backend: `command_line_network` and `command_line.network` set the same "
        "key; keep one of them"
    )


def test_a_misspelt_flat_key_gets_the_flat_name_as_did_you_mean(dirs):
    assert error_for(dirs, "      command_line_sandbx: none\n") == (
        "agents[0].backend.command_line_sandbx: unknown key. Did you mean "
        "`command_line_sandbox`? Provider-specific parameters go under `extra_body`"
    )


def test_a_misspelt_nested_key_gets_the_groups_name_as_did_you_mean(dirs):
    assert error_for(dirs, "      command_line: {sandbx: none}\n") == (
        "agents[0].backend.command_line.sandbx: unknown key. Did you mean `sandbox`?"
    )


@pytest.mark.parametrize(
    ("lines", "head", "path"),
    [
        (
            "      command_line_max_processes: 2\n",
            AGENT,
            "agents[0].backend.command_line_max_processes",
        ),
        (
            "      command_line: {max_processes: 2}\n",
            AGENT,
            "agents[0].backend.command_line.max_processes",
        ),
        ("    command_line_max_processes: 2\n", SINGLE, "agent.backend.command_line_max_processes"),
    ],
)
def test_a_bad_value_is_reported_at_the_key_as_the_file_wrote_it(dirs, lines, head, path):
    assert error_for(dirs, lines, head) == f"{path}: must be greater than or equal to 8, got 2"


def test_container_keys_inside_the_group_say_not_supported_yet(dirs):
    assert error_for(dirs, "      command_line: {docker_image: python:3.12}\n") == (
        "`agents[0].backend.command_line.docker_image` is not supported by this version of "
        "massgen yet. Remove it to run this config"
    )


@pytest.mark.parametrize("network", ["", "        network: false\n"])
def test_the_predecessors_container_keys_fill_a_nested_group_without_a_clash(dirs, network):
    lines = (
        "      command_line_execution_mode: docker\n"
        "      command_line_docker_network_mode: bridge\n"
        "      command_line:\n        enabled: true\n" + network
    )
    group = backend(dirs, lines).command_line
    assert (group.enabled, group.execution_mode, group.sandbox) == (True, "local", "auto")
    assert group.network is (not network)  # bridge: network, unless `network: false` says no


def test_hosted_tool_keys_load_flat_or_nested_and_switch_on_the_same_tools(dirs):
    flat = backend(dirs, "      enable_web_search: true\n      enable_code_interpreter: true\n")
    nested = backend(dirs, "      hosted: {web_search: true, code_interpreter: true}\n")
    assert flat == nested
    assert nested.hosted_tools() == ("web_search", "code_execution")


CLAUDE_CODE = "agents:\n  - id: a\n    backend:\n      type: claude_code\n"


def test_claude_code_keys_load_flat_or_nested(dirs):
    flat = backend(
        dirs,
        "      claude_code_tools: [Read]\n      permission_mode: plan\n      max_turns: 7\n",
        CLAUDE_CODE,
    )
    nested = backend(
        dirs,
        "      claude_code: {tools: [Read], permission_mode: plan, max_turns: 7}\n",
        CLAUDE_CODE,
    )
    assert flat == nested
    assert (nested.claude_code.tools, nested.claude_code.max_turns) == (("Read",), 7)


@pytest.mark.parametrize(
    "lines", ["      system_prompt: x\n", "      claude_code: {system_prompt: x}\n"]
)
def test_claude_code_keys_on_another_backend_type_are_refused_either_way(dirs, lines):
    assert error_for(dirs, lines) == (
        "agents[0].backend: `system_prompt` configure Claude Code, and this backend is "
        "`type: chatcompletion`; remove them, or use type: claude_code"
    )


def test_media_keys_load_flat_or_nested(dirs):
    flat = backend(
        dirs,
        "      enable_image_generation: true\n      enable_multimodal_tools: false\n"
        "      media_tools: [understand_audio]\n",
    )
    nested = backend(
        dirs,
        "      media:\n        image_generation: true\n        multimodal_tools: false\n"
        "        tools: [understand_audio]\n",
    )
    assert flat == nested
    media = nested.media
    assert (media.image_generation, media.multimodal_tools) == (True, False)
    assert media.tools == ("understand_audio",)


def test_the_predecessors_media_files_see_a_nested_media_group(dirs):
    """Its `generate_media` file needs a mode switched on; `media: {image_generation:
    true}` is one, and its understand_* files join `media.tools`."""
    lines = (
        "      media: {image_generation: true}\n"
        "      custom_tools:\n"
        "        - {name: [generate_media], path: massgen/tool/_multimodal_tools/generation/generate_media.py}\n"
        "        - {name: [understand_image], path: massgen/tool/_multimodal_tools/understand_image.py}\n"
    )
    media = backend(dirs, lines).media
    assert (media.image_generation, media.tools) == (True, ("understand_image",))
