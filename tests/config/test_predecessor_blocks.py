"""The predecessor's larger blocks, read as what they mean here: AG2 agents as native
agents (`config/predecessor/ag2.py`), the `memory:` block as filesystem memory
(`config/predecessor/memory.py`), bootstrap criteria as generated criteria, and the
transport and tool-loading keys (NLIP, tool search, programmatic flow) that change nothing
a team does."""

from __future__ import annotations

import sys

import pytest

import massgen
from massgen.config import load_config
from massgen.config.predecessor import translate
from massgen.testing import FakeProvider, Reply, cooperative_agent


def ag2(agent_config: str, llm: str = "{api_type: anthropic, model: claude-sonnet-4-5}") -> str:
    return (
        "agents:\n  - id: ag2_assistant\n    backend:\n      type: ag2\n"
        f"      agent_config:\n        llm_config: {llm}\n{agent_config}"
    )


# ---------------------------------------------------------------- AG2


def test_an_ag2_assistant_is_a_native_agent_on_its_model(dirs):
    text = ag2(
        "        name: AG2_Assistant\n"
        "        system_message: You are a helpful AI assistant powered by AG2.\n",
        llm="[{api_type: anthropic, model: claude-sonnet-4-5, temperature: 0.3, cache_seed: 42}]",
    )
    agent = load_config(dirs.write("c.yaml", text)).agents[0]
    assert (agent.backend.type, agent.backend.model) == ("claude", "claude-sonnet-4-5")
    assert agent.backend.temperature == 0.3
    assert agent.system_message == "You are a helpful AI assistant powered by AG2."
    assert not agent.backend.command_line.enabled


@pytest.mark.parametrize(
    ("llm", "expected"),
    [
        ("{model: gpt-5}", ("openai", "gpt-5")),  # AG2's default api_type
        ("{api_type: google, model: gemini-2.5-flash}", ("gemini", "gemini-2.5-flash")),
        ("{config_list: [{model: a}, {model: b}], temperature: 0.5}", ("openai", "a")),
    ],
)
def test_each_llm_config_form_names_the_backend_and_model(llm, expected):
    raw = {"agents": [{"id": "x", "backend": {"type": "ag2", "agent_config": {}}}]}
    raw["agents"][0]["backend"]["agent_config"]["llm_config"] = _yaml(llm)
    data, notes = translate(raw, "c.yaml")
    backend = data["agents"][0]["backend"]
    assert (backend["type"], backend["model"]) == expected
    if "config_list" in llm:
        assert backend["temperature"] == 0.5
        assert any("first of its 2 entries" in str(n) for n in notes)


def _yaml(text: str):
    import yaml

    return yaml.safe_load(text)


def test_a_code_executor_becomes_the_command_tool_in_a_workspace(dirs):
    text = ag2(
        "        system_message: Write code.\n"
        "        code_execution_config:\n          executor:\n"
        "            type: LocalCommandLineCodeExecutor\n            timeout: 60\n"
        "            work_dir: ./code_execution_workspace\n",
        llm="{api_type: openai, model: gpt-5}",
    )
    agent = load_config(dirs.write("c.yaml", text)).agents[0]
    assert agent.backend.command_line.enabled
    assert agent.backend.cwd == "code_execution_workspace"
    assert agent.backend.command_line.timeout_seconds == 60
    assert agent.system_message is not None
    assert agent.system_message.startswith("Write code.")
    assert "`execute_command`" in agent.system_message


CODE = "import math\nprint('factorial', math.factorial(5))\n"


def test_an_ag2_coder_runs_its_code_with_the_command_tool_on_the_fake(dirs):
    """A user's AG2 coding agent, end to end: the model calls `execute_command`, the code
    runs in the agent's workspace, and the answer carries its output."""

    def coder(request: dict) -> Reply:
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        if "new_answer" in offered and "vote" not in offered:
            if not results:
                return Reply(tool_calls=[("write_file", {"path": "fact.py", "content": CODE})])
            if len(results) == 1:
                command = f"{sys.executable} fact.py"
                return Reply(tool_calls=[("execute_command", {"command": command})])
            return Reply(tool_calls=[("new_answer", {"content": results[-1]})])
        return cooperative_agent(request)

    with FakeProvider(coder) as fake:
        text = ag2(
            "        code_execution_config:\n          executor:\n"
            "            type: LocalCommandLineCodeExecutor\n            work_dir: coding\n",
            llm=f"{{api_type: ollama, model: m, base_url: '{fake.base_url}'}}",
        )
        config = load_config(dirs.write("c.yaml", text))
        result = massgen.run("Compute 5!", config=config, logs=False)
    assert result.status == "ok", result.reason
    assert "factorial 120" in result.answer


def test_an_ag2_group_chat_is_refused_with_how_to_write_it_as_a_team(dirs):
    text = (
        "agents:\n  - id: team\n    backend:\n      type: ag2\n      group_config:\n"
        "        llm_config: {model: gpt-5}\n        agents: [{name: Coder}]\n"
    )
    message = dirs.config_error(text)
    assert "agents[0].backend.group_config" in message
    assert "as massgen agents" in message


def test_an_api_type_with_no_backend_here_names_the_ones_there_are(dirs):
    message = dirs.config_error(ag2("", llm="{api_type: bedrock, model: m}"))
    assert "agents[0].backend.agent_config.llm_config.api_type" in message
    assert "anthropic" in message and "bedrock" in message


def test_an_ag2_backend_without_an_agent_config_is_refused(dirs):
    message = dirs.config_error("agents:\n  - id: a\n    backend: {type: ag2}\n")
    assert "agents[0].backend.agent_config" in message


# ---------------------------------------------------------------- memory

TEAM = (
    "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5, cwd: ws_a}\n"
    "  - id: b\n    backend: {type: openai, model: gpt-5, cwd: ws_b}\n"
)
MEM0 = (
    "memory:\n  enabled: true\n  conversation_memory: {enabled: true}\n"
    "  persistent_memory:\n    enabled: true\n    vector_store: qdrant\n"
    "    llm: {provider: openai, model: gpt-4.1-nano}\n"
    "  compression: {trigger_threshold: 0.25, target_ratio: 0.1}\n"
)


def test_persistent_memory_is_read_as_filesystem_memory(dirs):
    config = load_config(dirs.write("c.yaml", TEAM + MEM0))
    assert config.orchestrator.coordination.enable_memory_filesystem_mode
    data, notes = translate(_yaml(TEAM + MEM0), "c.yaml")
    said = {n.path: str(n) for n in notes}
    assert "filesystem memory" in said["memory.persistent_memory"]
    assert "vector_store" in said["memory.persistent_memory"]  # what mem0 had is named
    assert "no context compression" in said["memory.compression"]
    assert "memory" not in data


def test_persistent_memory_with_no_workspace_is_refused_with_the_fix(dirs):
    team = "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5}\n"
    message = dirs.config_error(team + MEM0)
    assert "memory.persistent_memory" in message and "backend.cwd" in message


def test_conversation_memory_alone_or_memory_off_asks_for_nothing_new(dirs):
    team = "agents:\n  - id: a\n    backend: {type: openai, model: gpt-5}\n"
    only_history = "memory:\n  persistent_memory: {enabled: false}\n"
    for block in (only_history, "memory:\n  enabled: false\n"):
        config = load_config(dirs.write("c.yaml", team + block))
        assert not config.orchestrator.coordination.enable_memory_filesystem_mode


def test_a_memory_key_that_is_not_a_block_is_refused(dirs):
    assert "`memory`" in dirs.config_error(TEAM + "memory: 5\n")


# ---------------------------------------------------------------- criteria, transports


@pytest.mark.parametrize("mode", ["bootstrap_inline", "bootstrap_subagent"])
def test_bootstrap_criteria_are_read_as_generated_criteria(dirs, mode):
    text = TEAM + (
        f"orchestrator:\n  coordination:\n    criteria_mode: {mode}\n"
        "    bootstrap_max_per_agent_per_round: 3\n    bootstrap_max_total: 30\n"
    )
    config = load_config(dirs.write("c.yaml", text))
    assert config.orchestrator.coordination.evaluation_criteria_generator.enabled


def test_static_criteria_mode_is_what_massgen_does(dirs):
    text = TEAM + "orchestrator:\n  coordination:\n    criteria_mode: static\n"
    config = load_config(dirs.write("c.yaml", text))
    assert not config.orchestrator.coordination.evaluation_criteria_generator.enabled


def test_nlip_tool_search_and_programmatic_flow_load_with_notes():
    raw = _yaml(
        "nlip: {enabled: true}\n"
        "agents:\n  - id: a\n    nlip: {enabled: true}\n    backend:\n      type: claude\n"
        "      enable_tool_search: true\n      tool_search_variant: bm25\n"
        "      enable_programmatic_flow: true\n"
        "      custom_tools: [{name: t, path: t.py, function: t, defer_loading: true}]\n"
        "orchestrator: {enable_nlip: true}\n"
    )
    data, notes = translate(raw, "c.yaml")
    backend = data["agents"][0]["backend"]
    assert not {"enable_tool_search", "enable_programmatic_flow"} & set(backend)
    assert "defer_loading" not in backend["custom_tools"][0]
    paths = {n.path for n in notes}
    assert {"nlip", "agents[0].nlip", "orchestrator.enable_nlip"} <= paths
    assert "agents[0].backend.custom_tools[0].defer_loading" in paths
    assert all(n.said == "has no effect here" for n in notes)
