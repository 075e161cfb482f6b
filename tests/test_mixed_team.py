"""Cross-provider teams: every backend on its real SDK, each against a loopback fake that
speaks its provider's wire protocol. Gemini and Grok join when their modules are present."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

import massgen
from massgen import cli
from massgen.api import arun, load
from massgen.backends import pricing, registry, wires
from massgen.backends.profiles import PROFILES
from massgen.config.schema import BackendConfig
from massgen.core.errors import ConfigError
from massgen.core.status import ExitCode
from massgen.testing import FakeProvider, Fault, Reply, Scripted, cooperative_agent
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_openai_responses import FakeResponses

QUESTION = "What is the capital of France?"


def _has(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


# Backend type → (model, fake server class); Gemini and Grok come from another module pair.
MEMBERS: dict[str, tuple[str, Any]] = {
    "openai": ("gpt-5-mini", FakeResponses),
    "claude": ("claude-sonnet-4-6", FakeAnthropic),
    "zai": ("glm-4.5", FakeProvider),
}
if _has("massgen.backends.gemini", "massgen.testing.fake_gemini") and "gemini" in PROFILES:
    from massgen.testing.fake_gemini import FakeGemini

    MEMBERS["gemini"] = ("gemini-2.5-flash", FakeGemini)
if _has("massgen.backends.grok", "massgen.testing.fake_xai", "xai_sdk") and "grok" in PROFILES:
    from massgen.testing.fake_xai import FakeXai

    MEMBERS["grok"] = ("grok-4", FakeXai)


class FailFirst:
    """Answer the first requests with the given faults, then cooperate."""

    def __init__(self, *faults: Fault) -> None:
        self._faults = deque(faults)
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Reply:
        with self._lock:
            if self._faults:
                return Reply(fault=self._faults.popleft())
        return cooperative_agent(request)


def always(fault: Fault):
    return lambda request: Reply(fault=fault)


@contextmanager
def team(policies: dict[str, Any] | None = None, **backend: Any) -> Iterator[tuple[dict, dict]]:
    """A config dict for the mixed team, and the fake server behind each agent."""
    policies = policies or {}
    with ExitStack() as stack:
        fakes, agents = {}, []
        for kind, (model, fake_class) in MEMBERS.items():
            fake = stack.enter_context(fake_class(policies.get(kind)))
            fakes[kind] = fake
            spec = {"type": kind, "model": model, "base_url": fake.base_url, "api_key": "k-fake"}
            agents.append({"id": kind, "backend": {**spec, **backend}})
        yield {"agents": agents, "orchestrator": {"seed": 7}}, fakes


def test_the_mixed_team_covers_at_least_openai_claude_and_a_chatcompletion_profile():
    assert {"openai", "claude", "zai"} <= set(MEMBERS)


async def test_a_mixed_team_votes_and_presents_and_its_cost_table_adds_up(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with team() as (config, fakes):
        result = await arun(QUESTION, config)
        assert all(fake.requests for fake in fakes.values())
    assert result.status == "ok", result.reason
    assert result.winner in MEMBERS and result.answer
    assert len(result.votes) == len(MEMBERS)
    # Every agent's cost is the price table applied to each of its rounds' usage...
    for agent, (model, _) in MEMBERS.items():
        price = pricing.price_for(agent, model)
        assert price is not None, f"{agent}:{model} should be in the price table"
        rounds = [r for r in result.rounds if r.agent == agent]
        assert rounds and sum(r.usage.total_tokens for r in rounds) > 0
        expected = sum(price.cost(r.usage) for r in rounds)
        assert result.cost_usd[agent] == pytest.approx(expected)
        assert sum((r.usage for r in rounds), massgen.api.Usage()) == result.usage[agent]
    # ...and the total is their sum, in the result and in status.json alike.
    assert result.total_cost_usd == pytest.approx(sum(result.cost_usd.values()))
    status = json.loads((result.log_dir / "status.json").read_text())
    assert status["totals"]["cost_usd"] == pytest.approx(result.total_cost_usd)
    for agent in MEMBERS:
        assert status["agents"][agent]["usage"]["cost_usd"] == pytest.approx(result.cost_usd[agent])


async def test_a_provider_rate_limited_twice_then_answering_does_not_hurt_the_run():
    policies = {"claude": FailFirst(Fault.rate_limited(0.05), Fault.rate_limited(0.05))}
    with team(policies) as (config, fakes):
        result = await arun(QUESTION, config, logs=False)
        assert fakes["claude"].requests  # it was asked again after each 429
    assert result.status == "ok", result.reason
    assert result.failed_agents == {}
    assert len(result.votes) == len(MEMBERS)


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.unauthorized("Incorrect API key provided: k-f***"), "AuthFailed (HTTP 401)"),
        (Fault.server_error("The server is on fire"), "ProviderUnavailable (HTTP 500)"),
    ],
)
async def test_an_always_failing_provider_leaves_the_rest_of_the_team_to_finish(fault, error):
    with team({"openai": always(fault)}, max_retries=1) as (config, _):
        result = await arun(QUESTION, config, logs=False)
    assert result.status == "degraded"
    assert result.answer and result.winner not in (None, "openai")
    assert set(result.failed_agents) == {"openai"}
    message = fault.body["error"]["message"]
    assert error in result.failed_agents["openai"] and message in result.failed_agents["openai"]


def test_the_cli_names_the_failed_agent_and_prints_the_cost(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with team({"openai": always(Fault.unauthorized("Incorrect API key provided"))}) as (config, _):
        path = tmp_path / "team.yaml"
        path.write_text(yaml.safe_dump(config))
        code = cli.main(["--no-display", "--no-logs", "--config", str(path), QUESTION])
    out = capsys.readouterr().out
    assert code == ExitCode.OK
    assert "(agent openai failed: openai:gpt-5-mini: AuthFailed (HTTP 401): Incorrect" in out
    assert "tokens and estimated cost:" in out
    total = next(line for line in out.splitlines() if line.strip().startswith("total"))
    assert "$" in total


def test_automation_output_has_a_cost_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with team() as (config, _):
        path = tmp_path / "team.yaml"
        path.write_text(yaml.safe_dump(config))
        code = cli.main(["--automation", "--config", str(path), QUESTION])
    lines = capsys.readouterr().out.splitlines()
    assert code == ExitCode.OK
    cost = next(line for line in lines if line.startswith("COST: "))
    assert cost.startswith("COST: $")


# --- the remaining chatcompletion profiles ------------------------------------------------

CHAT_PROFILES = {
    "nebius": "NEBIUS_API_KEY",
    "moonshot": "MOONSHOT_API_KEY",
    "zai": "ZAI_API_KEY",
    "qwen": "QWEN_API_KEY",
    "poe": "POE_API_KEY",
    "nvidia_nim": "NVIDIA_API_KEY",
}


@pytest.mark.parametrize(("kind", "variable"), CHAT_PROFILES.items())
async def test_chatcompletion_profiles_take_their_key_from_env_and_honour_base_url(kind, variable):
    profile = PROFILES[kind]
    assert profile.wire is wires.CHAT_COMPLETIONS and profile.base_url.startswith("https://")
    with FakeProvider(Scripted([Reply(text="hello")])) as fake:
        cfg = BackendConfig(type=kind, model="m-1", base_url=fake.base_url, max_retries=0)
        backend = registry.create(cfg, env={variable: f"key-for-{kind}"})
        try:
            chunks = [e async for e in backend.stream(_ask())]
        finally:
            await backend.aclose()
        assert fake.headers[0]["authorization"] == f"Bearer key-for-{kind}"
    assert backend.name == f"{kind}:m-1" and chunks


@pytest.mark.parametrize("kind", CHAT_PROFILES)
def test_chatcompletion_profiles_without_a_key_say_which_variable(kind):
    with pytest.raises(ConfigError) as raised:
        registry.create(BackendConfig(type=kind, model="m"), env={})
    assert CHAT_PROFILES[kind] in raised.value.render()


def test_kimi_key_works_for_moonshot():
    backend = registry.create(BackendConfig(type="moonshot", model="m"), env={"KIMI_API_KEY": "k"})
    assert backend.name == "moonshot:m"


def _ask():
    from massgen.core.types import Message, Request

    return Request((Message("user", "hi"),))


# --- --model alone ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "kind"),
    [("gpt-5-mini", "openai"), ("claude-opus-4-6", "claude"), ("o4-mini", "openai")],
)
def test_model_alone_picks_the_backend_by_family(model, kind):
    assert load(model=model).config.agents[0].backend.type == kind


def test_model_with_base_url_is_a_chatcompletion_endpoint():
    loaded = load(model="llama3", base_url="http://localhost:11434/v1")
    assert loaded.config.agents[0].backend.type == "chatcompletion"


def test_an_unknown_model_alone_asks_for_backend_or_base_url(capsys):
    assert cli.main(["--model", "llama3", QUESTION]) == ExitCode.CONFIG
    assert "--backend" in capsys.readouterr().err


def test_model_alone_without_its_key_says_where_to_put_it(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert cli.main(["--model", "gpt-5-mini", "--no-logs", QUESTION]) == ExitCode.CONFIG
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "massgen --setup" in err


def test_provider_presets_and_the_mixed_team_preset_validate():
    root = Path(__file__).resolve().parents[1] / "configs"
    names = ["openai", "azure_openai", "claude", "nebius", "moonshot", "zai", "qwen", "poe"]
    for name in [*names, "nvidia_nim"]:
        assert load(str(root / "providers" / f"{name}.yaml")).config.agents
    mixed = load(str(root / "mixed_team.yaml")).config
    assert {a.backend.type for a in mixed.agents} >= {"openai", "claude", "gemini", "grok"}
