"""Registry: validation without keys, key resolution, lazy SDK import."""

import subprocess
import sys

import pytest
from backend_support import ask, collect, text_of

from massgen.backends import registry
from massgen.backends.base import Backend
from massgen.backends.chat_completions import ChatCompletionsBackend
from massgen.config.schema import BackendConfig
from massgen.core.errors import ConfigError
from massgen.testing import FakeProvider, Reply, Scripted


def cfg(**fields) -> BackendConfig:
    return BackendConfig(**fields)


def test_available_types_cover_the_openai_compatible_providers():
    expected = {"chatcompletion", "vllm", "sglang", "lmstudio", "ollama", "openrouter", "groq"}
    expected |= {"together", "cerebras", "fireworks", "nebius"}
    assert expected <= set(registry.available_types())


@pytest.mark.parametrize(
    "config",
    [
        cfg(type="groq", model="llama-3.3-70b-versatile"),  # no key needed to validate
        cfg(type="vllm", model="Qwen/Qwen3-4B"),
        cfg(type="zai"),  # has a default model
        cfg(type="chatcompletion", model="m", base_url="https://api.example.com/v1"),
    ],
)
def test_check_accepts_workable_configs(config):
    assert registry.check(config) is None


def test_check_suggests_a_close_type():
    key, message, fix = registry.check(cfg(type="groqq", model="m"))
    assert key == "type" and "unknown backend type 'groqq'" in message
    assert "did you mean 'groq'?" in fix


@pytest.mark.parametrize("old_type", ["copilot", "ag2", "autogen"])
def test_check_names_predecessor_types_as_not_supported_yet(old_type):
    key, message, fix = registry.check(cfg(type=old_type, model="m"))
    assert key == "type"
    assert "not supported by this version yet" in message
    assert fix


@pytest.mark.parametrize(
    ("old_type", "wire"),
    [
        ("antigravity_cli", "gemini"),
    ],
)
def test_agent_cli_types_are_their_model_over_its_api(old_type, wire):
    assert registry.check(cfg(type=old_type)) is None
    assert registry.PROFILES[old_type].wire.name == wire
    assert not registry.PROFILES[old_type].models  # never offered by the wizard


def test_codex_is_codex_itself_in_its_own_workspace():
    assert registry.PROFILES["codex"].wire.name == "codex"
    from massgen.config.schema import AgentConfig

    agent = AgentConfig(id="cx", backend=cfg(type="codex"))
    assert agent.backend.cwd == "cx_workspace"


def test_codex_path_belongs_to_codex():
    with pytest.raises(ValueError, match="codex_path"):
        cfg(type="openai", codex_path="/usr/bin/codex")


def test_claude_code_is_claude_code_itself_in_its_own_workspace():
    assert registry.PROFILES["claude_code"].wire.name == "claude_code"
    assert registry.check(cfg(type="claude_code", cwd="cc")) is None
    # Without a cwd, the agent gets a workspace named after it (a predecessor config, a
    # subagent's agent: its workspace is set per child).
    from massgen.config.schema import AgentConfig

    agent = AgentConfig(id="coder one", backend=cfg(type="claude_code"))
    assert agent.backend.cwd == "coder_one_workspace"
    assert AgentConfig(id="c", backend=cfg(type="claude_code", cwd="mine")).backend.cwd == "mine"


def test_gemini_cli_is_gemini_cli_itself_in_its_own_workspace():
    from massgen.config.schema import AgentConfig

    assert registry.PROFILES["gemini_cli"].wire.name == "gemini_cli"
    assert not registry.PROFILES["gemini_cli"].tools  # its action: a JSON object
    agent = AgentConfig(id="gem", backend=cfg(type="gemini_cli"))
    assert agent.backend.cwd == "gem_workspace"


def test_check_requires_a_model_without_a_profile_default():
    key, message, _ = registry.check(cfg(type="ollama"))
    assert key == "model" and "'ollama' needs a model" in message


def test_check_requires_base_url_for_generic_chatcompletion():
    key, _, fix = registry.check(cfg(type="chatcompletion", model="m"))
    assert key == "base_url" and "http://" in fix


def test_check_rejects_a_base_url_that_is_not_http():
    key, _, _ = registry.check(cfg(type="chatcompletion", model="m", base_url="localhost:8000"))
    assert key == "base_url"


def test_create_reports_problems_as_config_errors():
    with pytest.raises(ConfigError) as raised:
        registry.create(cfg(type="vllm"), env={})
    assert raised.value.path == "backend.model"


def test_create_names_the_missing_key_and_where_to_put_it():
    with pytest.raises(ConfigError) as raised:
        registry.create(cfg(type="groq", model="llama-3.3-70b-versatile"), env={})
    error = raised.value
    assert error.path == "backend.api_key"
    assert "GROQ_API_KEY" in error.message
    assert ".env" in error.fix and "~/.config/massgen/.env" in error.fix


@pytest.mark.parametrize("host", ["api.studio.nebius.ai", "api.nebius.com"])
def test_generic_chatcompletion_picks_the_key_by_host(host):
    config = cfg(type="chatcompletion", model="m", base_url=f"https://{host}/v1")
    with pytest.raises(ConfigError, match="NEBIUS_API_KEY"):
        registry.create(config, env={})
    backend = registry.create(config, env={"NEBIUS_API_KEY": "k"})
    assert isinstance(backend, ChatCompletionsBackend) and isinstance(backend, Backend)


def test_generic_chatcompletion_never_sends_another_providers_key_to_an_unknown_host():
    config = cfg(type="chatcompletion", model="m", base_url="https://llm.internal.example/v1")
    env = {"OPENAI_API_KEY": "sk-openai", "GROQ_API_KEY": "gsk"}
    assert registry.resolve_api_key(config, env) == "EMPTY"


def test_config_key_wins_over_env():
    config = cfg(type="groq", model="m", api_key="from-config")
    assert registry.resolve_api_key(config, {"GROQ_API_KEY": "from-env"}) == "from-config"


async def test_local_server_needs_no_key_and_gets_config_params():
    with FakeProvider(Scripted([Reply(text="hello")])) as fp:
        config = cfg(type="vllm", model="Qwen/Qwen3-4B", base_url=fp.base_url, temperature=0.3)
        backend = registry.create(config, env={})
        # The config's parameters travel in each request (as `Member.params` carries them).
        request = ask(params=config.generation_params())
        try:
            assert backend.name == "vllm:Qwen/Qwen3-4B"
            assert text_of(await collect(backend.stream(request))) == "hello"
        finally:
            await backend.aclose()
        assert fp.headers[0]["authorization"] == "Bearer EMPTY"
        assert fp.requests[0]["temperature"] == 0.3


async def test_optional_local_key_is_sent_when_set():
    with FakeProvider(Scripted([Reply(text="hi")])) as fp:
        config = cfg(type="vllm", model="m", base_url=fp.base_url)
        backend = registry.create(config, env={"VLLM_API_KEY": "local-secret"})
        try:
            await collect(backend.stream(ask()))
        finally:
            await backend.aclose()
        assert fp.headers[0]["authorization"] == "Bearer local-secret"


def test_importing_and_checking_does_not_import_openai():
    code = (
        "import sys\n"
        "from massgen.backends import registry\n"
        "from massgen.config.schema import BackendConfig\n"
        "registry.check(BackendConfig(type='groq', model='m'))\n"
        "assert 'openai' not in sys.modules, 'openai was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_reasoning_effort_a_config_may_set_maps_onto_every_wire_that_maps_it():
    """`xhigh` (OpenAI's highest, which the predecessor's configs use) and the rest: a
    wire that translates efforts knows each one, so none becomes a KeyError mid-run."""
    from typing import get_args

    from massgen.backends import anthropic_messages, gemini, grok

    efforts = set(get_args(get_args(BackendConfig.model_fields["reasoning_effort"].annotation)[0]))
    assert "xhigh" in efforts
    for table in (anthropic_messages._EFFORT, grok._EFFORT, gemini._THINKING_BUDGET):
        assert set(table) == efforts
