"""From a `BackendConfig` to a `Backend`: validation, key resolution, lazy construction.

Importing this module must stay cheap: provider SDKs are imported only by `create`.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Mapping

from massgen.backends.base import Backend
from massgen.backends.profiles import (
    NO_KEY,
    PROFILES,
    Profile,
    is_local,
    key_env_for,
    key_required,
)
from massgen.config.schema import BackendConfig
from massgen.core.errors import ConfigError

# Predecessor `type`s we do not implement yet, with the nearest thing that works today.
_PREDECESSOR_TYPES: dict[str, str] = {
    "openai": "use type: chatcompletion with base_url: https://api.openai.com/v1",
    "azure_openai": "use type: chatcompletion with your Azure OpenAI-compatible base_url",
    "claude": "use type: chatcompletion with base_url: https://api.anthropic.com/v1/",
    "claude_code": "",
    "codex": "",
    "gemini_cli": "",
    "antigravity_cli": "",
    "copilot": "",
    "ag2": "",
    "autogen": "",
    "inference": "use type: vllm or sglang",
    "uitars": "",
}

_KEY_FILES = "a .env file in the directory you run massgen from, or ~/.config/massgen/.env"

Problem = tuple[str, str, str]  # (config key, what is wrong, how to fix it)


def available_types() -> list[str]:
    return sorted(PROFILES)


def check(cfg: BackendConfig) -> Problem | None:
    """The first reason `cfg` cannot work, or None. Does not look at API keys, so configs
    validate on machines without credentials."""
    profile = PROFILES.get(cfg.type)
    if profile is None:
        return _unknown_type(cfg.type)
    if profile.wire == "grok":
        from massgen.backends import grok  # cheap: xai_sdk and grpc load only on create

        problem = grok.check(cfg)
        if problem is not None:
            return problem
    if not cfg.model and not profile.default_model:
        return ("model", f"backend type {cfg.type!r} needs a model", _model_fix(profile))
    base_url = cfg.base_url or profile.base_url
    if not base_url:
        fix = (
            "set base_url to the server's OpenAI-compatible endpoint, e.g. http://localhost:8000/v1"
        )
        return ("base_url", f"backend type {cfg.type!r} needs a base_url", fix)
    if not base_url.startswith(("http://", "https://")):
        return (
            "base_url",
            f"base_url {base_url!r} is not an http(s) URL",
            "start it with https://",
        )
    return None


def _unknown_type(type_: str) -> Problem:
    if type_ in _PREDECESSOR_TYPES:
        fix = _PREDECESSOR_TYPES[type_] or f"available types: {', '.join(available_types())}"
        return ("type", f"backend type {type_!r} is not supported by this version yet", fix)
    close = difflib.get_close_matches(type_, available_types(), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        "type",
        f"unknown backend type {type_!r}",
        f"{hint}available types: {', '.join(available_types())}",
    )


def _model_fix(profile: Profile) -> str:
    if profile.base_url and is_local(profile.base_url):
        return "set model to a model the local server has loaded"
    return f"set model to one of {profile.name}'s model ids"


def resolve_api_key(cfg: BackendConfig, env: Mapping[str, str]) -> str:
    """The key to send: the config's, else the profile's env vars, else `NO_KEY` where none
    is needed.

    Raises:
        ConfigError: a key is required and none was found.
    """
    if cfg.api_key:
        return cfg.api_key
    profile = PROFILES[cfg.type]
    base_url = cfg.base_url or profile.base_url
    names = key_env_for(profile, base_url)
    for name in names:
        if env.get(name):
            return env[name]
    if not key_required(profile, base_url):
        return NO_KEY
    wanted = " or ".join(names)
    raise ConfigError(
        f"no API key for backend type {cfg.type!r}: {wanted} is not set",
        path="backend.api_key",
        fix=f"add {names[0]}=<your key> to {_KEY_FILES}, export it, or set api_key in the config",
    )


def create(cfg: BackendConfig, *, env: Mapping[str, str] | None = None) -> Backend:
    """Build the backend for `cfg`.

    Raises:
        ConfigError: `check` found a problem, or a required key is missing.
    """
    problem = check(cfg)
    if problem is not None:
        key, message, fix = problem
        raise ConfigError(message, path=f"backend.{key}", fix=fix)
    api_key = resolve_api_key(cfg, os.environ if env is None else env)
    profile = PROFILES[cfg.type]
    # Imported here so that validation and `--help` never load a provider SDK.
    module = importlib.import_module(_WIRE_MODULES[profile.wire])
    return module.create(cfg, profile, api_key)


# One module per wire format; each exposes `create(cfg, profile, api_key) -> Backend`.
_WIRE_MODULES: dict[str, str] = {
    "chatcompletion": "massgen.backends.chat_completions",
    "gemini": "massgen.backends.gemini",
    "grok": "massgen.backends.grok",
}
