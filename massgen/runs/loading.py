"""From what a caller gives (a file, an @examples name, a dict, a config, or nothing) to a
validated config. Light on purpose: `massgen --validate` needs this and nothing that runs
a team (no asyncio, no coordination, no provider SDK).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.backends import models
from massgen.config import loader, presets
from massgen.config.schema import MassgenConfig
from massgen.runs import members

ConfigLike = str | Path | dict[str, Any] | MassgenConfig | None


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    config: MassgenConfig
    source: str | None = None  # the file it came from, for error messages and logs
    raw: dict[str, Any] | None = None  # as written (unexpanded ${VAR}s), for the run log
    single: bool = False  # written with `agent:` rather than `agents:`
    # What `${VAR}`s and API keys resolve against (.env files under the real environment);
    # None: the process environment as it is.
    env: Mapping[str, str] | None = None


def load(
    config: ConfigLike = None,
    *,
    model: str | None = None,
    backend: str | None = None,
    base_url: str | None = None,
    system_message: str | None = None,
) -> LoadedConfig:
    """Resolve what the caller gave into a validated config. Raises ConfigError."""
    env = loader.environment()
    source = "<config>"
    if config is None:
        config = _quick_config(model, backend, base_url, system_message, env)
        source = "--model" if model else "<default team>"
    if isinstance(config, MassgenConfig):
        return LoadedConfig(config, env=env)
    if isinstance(config, dict):
        parsed = loader.config_from_dict(config, source, env)
        loaded = LoadedConfig(parsed, source, config, "agent" in config, env)
    else:
        path = presets.resolve_config_arg(str(config))
        parsed, raw = loader.load_config_with_raw(path, env)
        loaded = LoadedConfig(parsed, str(path), raw, isinstance(raw, dict) and "agent" in raw, env)
    members.check(loaded.config, source=loaded.source, single=loaded.single)
    return loaded


def _quick_config(
    model: str | None,
    backend: str | None,
    base_url: str | None,
    system_message: str | None,
    env: Mapping[str, str],
) -> dict[str, Any] | Path:
    if not model:
        found = loader.find_default_config()
        if found is None:
            # Nothing configured: a team over the keys in the environment, else the
            # built-in local model.
            from massgen.runs import defaults

            return defaults.default_team(env).config
        return found
    if not backend:
        # An explicit endpoint speaks Chat Completions; else the model's family decides.
        backend = "chatcompletion" if base_url else models.backend_for(model)
    spec: dict[str, Any] = {"type": backend, "model": model}
    if base_url:
        spec["base_url"] = base_url
    agent: dict[str, Any] = {"id": "agent", "backend": spec}
    if system_message:
        agent["system_message"] = system_message
    return {"agent": agent}
