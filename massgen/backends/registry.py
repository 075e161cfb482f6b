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
    "claude_code": "the Claude Code agent (claude-agent-sdk) is not wired in yet; "
    "use type: claude, the Anthropic API with ANTHROPIC_API_KEY",
    "codex": "",
    "gemini_cli": "",
    "antigravity_cli": "",
    "copilot": "",
    "ag2": "",
    "autogen": "",
    "inference": "use type: vllm or sglang",
    "uitars": "",
}

_KEY_FILES = (
    "a .env file in the directory you run massgen from or ~/.config/massgen/.env "
    "(or run `massgen --setup`)"
)

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
    if profile.wire == "local":
        from massgen.backends import local  # cheap: llama_cpp is imported only to load a model

        return local.check(cfg) or _unsupported_param(cfg, profile)
    from_env = dict(profile.env_defaults)  # filled in by `create` from the environment
    if not cfg.model and not profile.default_model and "model" not in from_env:
        return ("model", f"backend type {cfg.type!r} needs a model", _model_fix(profile))
    unsupported = _unsupported_param(cfg, profile)
    if unsupported is not None:
        return unsupported
    base_url = cfg.base_url or profile.base_url
    if not base_url and "base_url" in from_env:
        return None
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


def _unsupported_param(cfg: BackendConfig, profile: Profile) -> Problem | None:
    allowed = _WIRE_PARAMS.get(profile.wire)
    if allowed is None:
        return None
    for name in _TYPED_PARAMS:
        if getattr(cfg, name) is not None and name not in allowed:
            return (
                name,
                f"{name} is not a parameter of backend type {cfg.type!r}",
                f"remove it (it takes {', '.join(sorted(allowed))}), or put it under "
                "extra_body if the provider accepts it",
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
    env = os.environ if env is None else env
    api_key = resolve_api_key(cfg, env)
    profile = PROFILES[cfg.type]
    cfg = _with_env_defaults(cfg, profile, env)
    # Imported here so that validation and `--help` never load a provider SDK.
    module_name, _, function = _WIRE_MODULES[profile.wire].partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, function or "create")(cfg, profile, api_key)


def _with_env_defaults(
    cfg: BackendConfig, profile: Profile, env: Mapping[str, str]
) -> BackendConfig:
    """`cfg` with the fields it leaves out taken from the profile's environment variables.

    Raises:
        ConfigError: a field the backend needs is neither in the config nor the environment.
    """
    found: dict[str, str] = {}
    needed = {"base_url": profile.base_url, "model": profile.default_model}
    for field, names in profile.env_defaults:
        if getattr(cfg, field) is None:
            value = next((env[name] for name in names if env.get(name)), None)
            if value is not None:
                found[field] = value
            elif field in needed and needed[field] is None:
                raise ConfigError(
                    f"backend type {cfg.type!r} needs {field}: neither the config nor "
                    f"{' or '.join(names)} gives it",
                    path=f"backend.{field}",
                    fix=f"set {field} in the config, or add {names[0]}=... to {_KEY_FILES}",
                )
    return cfg.model_copy(update=found) if found else cfg


# One module per wire format; each exposes `create(cfg, profile, api_key) -> Backend`.
_WIRE_MODULES: dict[str, str] = {
    "chatcompletion": "massgen.backends.chat_completions",
    "responses": "massgen.backends.responses",
    "azure_responses": "massgen.backends.responses:create_azure",
    "anthropic": "massgen.backends.anthropic_messages",
    "gemini": "massgen.backends.gemini",
    "grok": "massgen.backends.grok",
    "local": "massgen.backends.local",
}

# The typed generation parameters each wire format takes; a config that sets another one is
# refused rather than silently dropped. Wires not listed take every typed parameter.
_TYPED_PARAMS = (
    "temperature",
    "top_p",
    "max_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "reasoning_effort",
    "reasoning_summary",
    "thinking_budget",
)
_CHAT_PARAMS = frozenset(_TYPED_PARAMS[:8])
_RESPONSES_PARAMS = frozenset(
    {"temperature", "top_p", "max_tokens", "reasoning_effort", "reasoning_summary"}
)
_WIRE_PARAMS: dict[str, frozenset[str]] = {
    "chatcompletion": _CHAT_PARAMS,
    "responses": _RESPONSES_PARAMS,
    "azure_responses": _RESPONSES_PARAMS,
    "anthropic": frozenset(
        {"temperature", "top_p", "max_tokens", "stop", "reasoning_effort", "thinking_budget"}
    ),
    "gemini": _CHAT_PARAMS | {"thinking_budget"},
    "grok": _CHAT_PARAMS,
    "local": _CHAT_PARAMS - {"reasoning_effort"},
}
