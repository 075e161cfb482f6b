"""`betas` on a Claude backend: the Anthropic beta features a config asks for (the
predecessor's computer-use configs name `computer-use-2025-01-24`) go out as the
`anthropic-beta` header of every request, next to the one code execution needs; other
backend types refuse the key."""

import pytest
from backend_support import ask, collect

from massgen.backends.anthropic_messages import CODE_EXECUTION_BETA, AnthropicBackend
from massgen.config import load_config
from massgen.core.errors import ConfigError
from massgen.runs import members
from massgen.testing import Reply, Scripted
from massgen.testing.fake_anthropic import FakeAnthropic

COMPUTER_USE = "computer-use-2025-01-24"


@pytest.fixture
def claude(backends):
    return backends(AnthropicBackend, provider="claude", model="claude-fake", api_key="k")


async def test_the_betas_go_out_on_every_request(claude):
    with FakeAnthropic(Scripted([Reply(text="one"), Reply(text="two")])) as fake:
        backend = claude(fake, betas=(COMPUTER_USE, "files-api-2025-04-14"))
        await collect(backend.stream(ask()))
        await collect(backend.stream(ask()))
        headers = fake.headers
    assert [h["anthropic-beta"] for h in headers] == [f"{COMPUTER_USE},files-api-2025-04-14"] * 2


async def test_the_code_execution_beta_joins_the_configured_ones_once(claude):
    with FakeAnthropic(Scripted([Reply(text="ok")])) as fake:
        backend = claude(fake, betas=(COMPUTER_USE, CODE_EXECUTION_BETA))
        await collect(backend.stream(ask(hosted=("code_execution",))))
        header = fake.headers[0]["anthropic-beta"]
    assert header == f"{COMPUTER_USE},{CODE_EXECUTION_BETA}"


def _config(tmp_path, backend: str):
    file = tmp_path / "c.yaml"
    file.write_text(f"agents:\n  - id: a\n    backend: {backend}\n")
    config = load_config(file)
    members.check(config, source=str(file))  # what `--validate` and a run check
    return config


def test_betas_on_a_backend_without_them_are_refused_naming_where_they_work(tmp_path):
    with pytest.raises(ConfigError) as caught:
        _config(tmp_path, f"{{type: openai, model: gpt-5, betas: [{COMPUTER_USE}]}}")
    message = str(caught.value)
    assert "agents[0].backend.betas" in message and "claude" in message


def test_a_beta_name_that_is_not_one_is_refused(tmp_path):
    with pytest.raises(ConfigError) as caught:
        _config(tmp_path, "{type: claude, model: claude-sonnet-4-5, betas: ['Computer Use!']}")
    assert "agents[0].backend.betas" in str(caught.value)


def test_a_claude_config_with_betas_loads_them(tmp_path):
    config = _config(
        tmp_path, f"{{type: claude, model: claude-sonnet-4-5, betas: [{COMPUTER_USE}]}}"
    )
    assert config.agents[0].backend.betas == (COMPUTER_USE,)
