"""Every bad config gives exactly one ConfigError line: file, key path, what, and the fix."""

import json

import pytest

from massgen.config import config_from_dict, load_config, load_config_with_raw
from massgen.core.errors import ConfigError

GOOD_AGENT = "  - id: a\n    backend:\n      type: chatcompletion\n      model: m\n"


# ---------------------------------------------------------------- reading and parsing


def test_missing_file_says_so_and_points_at_examples(dirs):
    with pytest.raises(ConfigError) as caught:
        load_config(dirs.work / "nope.yaml")
    assert str(caught.value) == (
        f"{dirs.work / 'nope.yaml'}: no such file. Check the path or use `massgen --list-examples`"
    )


def test_malformed_yaml_names_the_line(dirs):
    text = "agents:\n- id: a\n  backend:\n    type: x\n   model: y\n"
    assert dirs.config_error(text) == (
        "malformed YAML at line 5: expected <block end>, but found '<block mapping start>'. "
        "Check the indentation and quoting near that line"
    )


def test_duplicate_yaml_key_is_an_error_not_last_wins(dirs):
    text = "agents:\n  - id: a\n    backend:\n      type: x\n      type: y\n"
    assert dirs.config_error(text) == "duplicate key `type` at line 5. Keep only one"


def test_malformed_json_names_line_and_column(dirs):
    message = dirs.config_error('{"agents": [\n  {"id": "a",}\n]}', name="c.json")
    assert message.startswith("malformed JSON at line 2, column 14: ")


def test_json_config_loads(dirs):
    data = {"agents": [{"id": "a", "backend": {"type": "groq", "model": "m"}}]}
    path = dirs.write("c.json", json.dumps(data))
    assert load_config(path).agents[0].backend.type == "groq"


def test_other_file_types_are_refused(dirs):
    assert dirs.config_error("agents: []", name="c.txt") == (
        "unsupported file type '.txt'. Use a .yaml, .yml or .json file"
    )


def test_top_level_must_be_a_mapping(dirs):
    assert dirs.config_error("- a\n- b\n") == (
        "the top level must be a mapping (agents:, orchestrator:, ...), got a list"
    )


def test_empty_file(dirs):
    assert dirs.config_error("# nothing here\n") == (
        "the file is empty. Start from an example: `massgen --list-examples`"
    )


# ---------------------------------------------------------------- ${VAR}


def test_unset_variable_names_variable_and_key_path(dirs):
    text = (
        "agents:\n"
        + GOOD_AGENT
        + GOOD_AGENT.replace("id: a", "id: b").replace(
            "model: m", "model: m\n      api_key: ${GROQ_KEY_FOR_TEST}"
        )
    )
    assert dirs.config_error(text) == (
        "agents[1].backend.api_key: environment variable `GROQ_KEY_FOR_TEST` is not set. "
        "Set it in the environment or in .env (./.env or ~/.config/massgen/.env)"
    )


def test_unset_variable_path_follows_single_agent_form(dirs):
    text = "agent:\n  id: a\n  backend:\n    type: x\n    model: ${MODEL_FOR_TEST}\n"
    assert dirs.config_error(text).startswith(
        "agent.backend.model: environment variable `MODEL_FOR_TEST` is not set."
    )


def test_variables_expand_inside_longer_strings_with_defaults_and_escapes(dirs, monkeypatch):
    monkeypatch.setenv("HOST_FOR_TEST", "gpu-box")
    text = (
        "agent:\n  id: a\n  system_message: write $${HOME} literally\n  backend:\n"
        "    type: x\n    base_url: http://${HOST_FOR_TEST}:8000/v1\n"
        "    model: ${UNSET_MODEL_FOR_TEST:-qwen3}\n"
    )
    config, raw = load_config_with_raw(dirs.write("c.yaml", text))
    agent = config.agents[0]
    assert agent.backend.base_url == "http://gpu-box:8000/v1"
    assert agent.backend.model == "qwen3"
    assert agent.system_message == "write ${HOME} literally"
    # The raw dict is the file as written, for logging without secrets.
    assert raw["agent"]["backend"]["base_url"] == "http://${HOST_FOR_TEST}:8000/v1"


def test_empty_variable_takes_the_default(monkeypatch):
    monkeypatch.setenv("EMPTY_FOR_TEST", "")
    data = {"agent": {"id": "a", "backend": {"type": "x", "model": "${EMPTY_FOR_TEST:-m}"}}}
    assert config_from_dict(data).agents[0].backend.model == "m"


# ---------------------------------------------------------------- schema problems


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        pytest.param(
            "      temperature: hot\n",
            "agents[0].backend.temperature: must be a number, got 'hot'",
            id="wrong-type-names-path-and-value",
        ),
        pytest.param(
            "      api_key: 123456789\n",
            "agents[0].backend.api_key: must be a string, got a number",
            id="wrong-type-never-echoes-a-secret",
        ),
        pytest.param(
            "timeout_settings:\n  orchestrator_timeout_seconds: -5\n",
            "timeout_settings.orchestrator_timeout_seconds: must be greater than 0, got -5",
            id="out-of-range",
        ),
        pytest.param(
            "orchestrator:\n  voting_sensitivity: harsh\n",
            "orchestrator.voting_sensitivity: must be one of 'lenient', 'balanced' or "
            "'strict', got 'harsh'",
            id="enum-lists-the-choices",
        ),
    ],
)
def test_a_bad_value_names_its_path_the_rule_and_what_was_given(dirs, extra, expected):
    assert dirs.config_error("agents:\n" + GOOD_AGENT + extra) == expected


OK_SERVER = "        - name: ok\n          command: python\n"


@pytest.mark.parametrize(
    ("servers", "where", "guess"),
    [
        # stdio and streamable-http, in the list form (after a good entry) and the dict form
        (OK_SERVER + "        - name: c\n          command: python\n          argz: [x]\n",
         "[1].argz", "args"),
        (OK_SERVER + "        - name: w\n          url: http://h/mcp\n          header: {}\n",
         "[1].header", "headers"),
        ("        c:\n          command: python\n          conect_timeout_seconds: 5\n",
         "[0].conect_timeout_seconds", "connect_timeout_seconds"),
    ],
)  # fmt: skip
def test_an_unknown_key_in_an_mcp_server_is_named_without_the_union_tag(
    dirs, servers, where, guess
):
    text = "agents:\n" + GOOD_AGENT + "      mcp_servers:\n" + servers
    assert dirs.config_error(text) == (
        f"agents[0].backend.mcp_servers{where}: unknown key. Did you mean `{guess}`?"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "agents:\n" + GOOD_AGENT + "      temprature: 0.3\n",
            "agents[0].backend.temprature: unknown key. Did you mean `temperature`? "
            "Provider-specific parameters go under `extra_body`",
            id="suggests-the-close-one",
        ),
        pytest.param(
            "agents:\n" + GOOD_AGENT + "orchestator:\n  max_new_answers_per_agent: 2\n",
            "orchestator: unknown key. Did you mean `orchestrator`?",
            id="top-level",
        ),
        pytest.param(
            "agents:\n" + GOOD_AGENT + "ui:\n  colour_scheme: dark\n",
            "ui.colour_scheme: unknown key. "
            "Valid keys here: automation_mode, debug, display_type, logging_enabled.",
            id="without-a-close-match-lists-the-valid-ones",
        ),
        pytest.param(
            "agents:\n  - agent_id: a\n    backend:\n      type: x\n",
            "agents[0].agent_id: unknown key. Did you mean `id`?",
            id="renamed-predecessor-key-gets-a-suggestion",
        ),
        pytest.param(
            "agents:\n  - id: a\n    bakend:\n      type: x\n",
            "agents[0].bakend: unknown key. Did you mean `backend`?",
            id="misspelt-required-key-is-the-typo-not-missing",
        ),
    ],
)
def test_unknown_key(dirs, text, expected):
    assert dirs.config_error(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "agents:\n  - id: a\n",
            "agents[0].backend: required key is missing. "
            "Add `backend:` with at least `type:` and `model:`",
        ),
        (
            "agents:\n  - backend:\n      type: x\n",
            "agents[0].id: required key is missing. Give every agent a unique `id`",
        ),
        (
            "agent:\n  id: a\n  backend:\n    model: m\n",
            "agent.backend.type: required key is missing. "
            "Set it to a backend type, e.g. `type: chatcompletion`",
        ),
        (
            "ui:\n  debug: true\n",
            "agents: no agents defined. Add `agents:` (a list) or `agent:` (one mapping)",
        ),
    ],
)
def test_missing_required_key(dirs, text, expected):
    assert dirs.config_error(text) == expected


def test_agent_and_agents_together(dirs):
    text = "agent:\n  id: z\n  backend: {type: x}\nagents:\n" + GOOD_AGENT
    assert dirs.config_error(text) == (
        "agent: `agent:` and `agents:` are both set. "
        "Use `agent:` for one agent or `agents:` for a list, not both"
    )


def test_agent_given_a_list(dirs):
    assert dirs.config_error("agent:\n" + GOOD_AGENT) == (
        "agent: `agent:` holds a list. Rename it to `agents:`, or give a single mapping"
    )


def test_duplicate_agent_ids_point_at_the_second_use(dirs):
    text = "agents:\n" + GOOD_AGENT + GOOD_AGENT.replace("id: a", "id: b") + GOOD_AGENT
    assert dirs.config_error(text) == (
        "agents[2].id: agent id 'a' is already used by agents[0]. Give every agent a unique `id`"
    )


# ---------------------------------------------------------------- predecessor features


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        (
            "      hooks:\n        PreToolUse: [{matcher: '*', handler: m.f}]\n",
            "agents[0].backend.hooks",
        ),
        ("orchestrator:\n  presenter_agent: a\n", "orchestrator.presenter_agent"),
        ("checkpoint:\n  enabled: true\n", "checkpoint"),
        (
            "timeout_settings:\n  agent_timeout_seconds: 60\n",
            "timeout_settings.agent_timeout_seconds",
        ),
    ],
)
def test_unsupported_predecessor_keys_say_not_supported_yet(dirs, extra, path):
    assert dirs.config_error("agents:\n" + GOOD_AGENT + extra) == (
        f"`{path}` is not supported by this version of massgen yet. Remove it to run this config"
    )


def test_unsupported_key_path_in_single_agent_form(dirs):
    text = "agent:\n  id: a\n  backend:\n    type: x\n    hooks: {}\n"
    assert dirs.config_error(text).startswith("`agent.backend.hooks` is not supported")


def test_unsupported_key_is_reported_before_typos_and_unset_variables(dirs):
    text = (
        "agents:\n  - id: a\n    backend:\n      type: x\n      modle: m\n"
        "      hooks:\n        - {name: gh, env: {GITHUB_TOKEN: '${UNSET_TOKEN_FOR_TEST}'}}\n"
    )
    assert dirs.config_error(text).startswith("`agents[0].backend.hooks` is not supported")


@pytest.mark.parametrize("key", ["models", "num_agents", "max_rounds", "consensus_threshold"])
def test_v1_config_is_named_as_the_old_format(dirs, key):
    assert dirs.config_error(f"{key}: 3\n") == (
        f"`{key}` is from the old v1 config format, which this version of massgen does not "
        "read. Rewrite the file with `agents:` entries (see `massgen --list-examples`)"
    )


# ---------------------------------------------------------------- the Python API


def test_config_from_dict_uses_the_source_name():
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"agents": [{"id": "a", "backend": {"type": "x", "top_p": 3}}]}, "api")
    assert str(caught.value) == (
        "api: agents[0].backend.top_p: must be less than or equal to 1, got 3"
    )


def test_config_from_dict_accepts_a_valid_team():
    config = config_from_dict(
        {
            "agents": [
                {"id": "a", "backend": {"type": "groq", "model": "m", "temperature": 0.2}},
                {"id": "b", "backend": {"type": "ollama", "model": "m"}},
            ],
            "orchestrator": {"max_new_answers_per_agent": 2},
        }
    )
    assert [a.id for a in config.agents] == ["a", "b"]
    assert config.orchestrator.max_new_answers_per_agent == 2


def test_importing_the_loader_stays_light():
    import subprocess
    import sys

    code = (
        "import sys, massgen.config.loader, massgen.config.presets\n"
        "heavy = {'rich', 'questionary', 'openai', 'anthropic', 'google', 'httpx'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- tool settings


def test_tool_settings_and_the_predecessors_planning_mode_load(dirs):
    text = (
        f"agents:\n{GOOD_AGENT}orchestrator:\n  tool_timeout_seconds: 5\n"
        "  max_tool_result_bytes: 4096\n  max_concurrent_tools: 2\n"
        "  coordination:\n    enable_planning_mode: true\n"
    )
    orchestrator = load_config(dirs.write("c.yaml", text)).orchestrator
    assert (orchestrator.tool_timeout_seconds, orchestrator.max_tool_result_bytes) == (5, 4096)
    assert orchestrator.max_concurrent_tools == 2
    assert orchestrator.coordination.enable_planning_mode is True


def test_other_coordination_keys_of_the_predecessor_are_named_as_unsupported(dirs):
    text = f"agents:\n{GOOD_AGENT}orchestrator:\n  coordination:\n    prompt_improver: true\n"
    assert dirs.config_error(text).startswith(
        "`orchestrator.coordination.prompt_improver` is not supported by this version of massgen"
    )


def test_orchestration_restarts_and_the_debug_answer_are_typed(dirs):
    text = (
        f"agents:\n{GOOD_AGENT}orchestrator:\n  debug_final_answer: short\n"
        "  coordination:\n    max_orchestration_restarts: 2\n"
    )
    orchestrator = load_config(dirs.write("c.yaml", text)).orchestrator
    assert orchestrator.coordination.max_orchestration_restarts == 2
    assert orchestrator.debug_final_answer == "short"


# ---------------------------------------------------------------- context paths


def test_a_context_path_that_does_not_exist_is_named(dirs):
    agent = GOOD_AGENT + "      cwd: ws\n"
    text = "agents:\n" + agent + "orchestrator:\n  context_paths:\n    - {path: missing/dir}\n"
    assert dirs.config_error(text).startswith(
        "orchestrator.context_paths[0].path: context path `missing/dir` does not exist (resolved: "
    )
    assert dirs.config_error(text).endswith(
        "a relative path is taken from the directory massgen runs in"
    )


def test_context_paths_need_an_agent_with_file_tools(dirs):
    text = "agents:\n" + GOOD_AGENT + "orchestrator:\n  context_paths:\n    - {path: .}\n"
    assert dirs.config_error(text) == (
        "orchestrator.context_paths: context paths are read with the file tools, and no agent "
        "has them. Give the agents a workspace with `cwd:` in their `backend:`"
    )


# ---------------------------------------------------------------- verifier


def test_a_verifier_needs_exactly_one_of_command_or_function(dirs):
    text = f"agents:\n{GOOD_AGENT}verifier:\n  timeout_seconds: 5\n"
    assert dirs.config_error(text) == (
        "verifier: set exactly one of `command` (a shell command that gets the answer on "
        "stdin) or `function` (`module:function`)"
    )


def test_a_verifier_function_must_name_module_and_function(dirs):
    text = f"agents:\n{GOOD_AGENT}verifier:\n  function: mychecks.verify\n"
    assert dirs.config_error(text) == (
        "verifier.function: must be `module:function`, got 'mychecks.verify'; for example "
        "`massgen.verifiers:python_examples`, or `mychecks:verify` for a function `verify` "
        "in mychecks.py beside the config"
    )
    text = f"agents:\n{GOOD_AGENT}verifier:\n  command: pytest\n  timeout: 5\n"
    assert (
        dirs.config_error(text) == "verifier.timeout: unknown key. Did you mean `timeout_seconds`?"
    )
