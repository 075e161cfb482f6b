"""From a `BackendConfig` to a `Backend`: validation, key resolution, lazy construction.

The path is typed end to end: `cfg.type` names a `Profile`, the profile holds its `Wire`,
the wire's loader imports the module and returns its `create`. Importing this module
stays cheap: provider SDKs are imported only when a backend is built.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from massgen.backends.base import Backend
from massgen.backends.profiles import (
    NO_KEY,
    PROFILES,
    Profile,
    key_env_for,
    key_required,
)
from massgen.backends.wires import Problem, Wire
from massgen.config.backend import HOSTED_KEYS, BackendConfig
from massgen.config.uploads import MediaFile, media
from massgen.core.errors import ConfigError
from massgen.core.types import TYPED_PARAMS

# Predecessor `type`s we do not implement yet, with the nearest thing that works today.
_PREDECESSOR_TYPES: dict[str, str] = {
    # GitHub Copilot's agent runs on a Copilot subscription, which has no API to call.
    "copilot": "use the same model over its provider's API, e.g. type: openai, model: gpt-5-mini",
    # `config/predecessor/ag2.py` reads one with an `agent_config`; this is one without.
    "ag2": "give it `agent_config: {llm_config: {api_type, model}}`, or use an API type",
    "autogen": "",
    "inference": "use type: vllm or sglang",
    "uitars": "",
}

_KEY_FILES = (
    "a .env file in the directory you run massgen from or ~/.config/massgen/.env "
    "(or run `massgen --setup`)"
)


def available_types() -> list[str]:
    return sorted(PROFILES)


def check(cfg: BackendConfig) -> Problem | None:
    """The first reason `cfg` cannot work, or None. Does not look at API keys, so configs
    validate on machines without credentials."""
    profile = PROFILES.get(cfg.type)
    if profile is None:
        return _unknown_type(cfg.type)
    return (
        profile.wire.check(cfg, profile)
        or _unsupported_param(cfg, profile.wire)
        or _unsupported_hosted(cfg, profile.wire)
        or _unsupported_media(cfg, profile.wire)
        or _unsent(cfg, profile.wire)
    )


# Keys only some wires send (today, the Anthropic Messages API): the key, whether a config
# asks for it, what it is in words, and the `Wire` flag of the wires that send it.
_WIRE_ONLY: tuple[tuple[str, Callable[[BackendConfig], bool], str, str], ...] = (
    (
        "enable_strict_tool_use",
        lambda c: c.enable_strict_tool_use,
        "strict tool use",
        "strict_tools",
    ),
    ("betas", lambda c: bool(c.betas), "Anthropic beta features", "beta_headers"),
)


def _unsent(cfg: BackendConfig, wire: Wire) -> Problem | None:
    """A key asking for what `wire` does not send, naming the backend types that do."""
    for key, asked, what, flag in _WIRE_ONLY:
        if asked(cfg) and not getattr(wire, flag):
            where = sorted(t for t, p in PROFILES.items() if getattr(p.wire, flag))
            fix = f"remove it, or use backend type {', '.join(where)}"
            return (key, f"backend type {cfg.type!r} has no {what}", fix)
    return None


def _unsupported_media(cfg: BackendConfig, wire: Wire) -> Problem | None:
    """An `upload_files` media entry whose kind the backend's wire cannot send, or a local
    file larger than the provider takes for its kind."""
    for index, entry in media(cfg.upload_files):
        if entry.kind in wire.media:
            too_big = _too_big(cfg, wire, index, entry)
            if too_big is not None:
                return too_big
            continue
        takes = sorted(t for t, p in PROFILES.items() if entry.kind in p.wire.media)
        own = f"takes {', '.join(sorted(wire.media))}" if wire.media else "takes no media"
        return (
            f"upload_files[{index}].{entry.key}",
            f"backend type {cfg.type!r} cannot send {entry.kind} to its model ({own})",
            f"remove the entry, or use a backend type that takes {entry.kind}: " + ", ".join(takes),
        )
    return None


def _too_big(cfg: BackendConfig, wire: Wire, index: int, entry: MediaFile) -> Problem | None:
    """A local media file whose base64 text passes the provider's bound for its kind (a
    URL's size is known only when it is fetched, at run start)."""
    limit = dict(wire.media_limits).get(entry.kind)
    if limit is None or entry.is_url:
        return None
    try:
        size = os.stat(entry.path).st_size
    except OSError:  # the loader checked it exists; a race is the run's to report
        return None
    encoded = -(-size // 3) * 4
    if encoded <= limit:
        return None
    mb = 2**20
    return (
        f"upload_files[{index}].{entry.key}",
        f"{Path(entry.path).name} is {size / mb:.1f} MB, and backend type {cfg.type!r} takes "
        f"an {entry.kind} of at most {limit / mb:g} MB once base64-encoded (a file of about "
        f"{limit * 3 / 4 / mb:.2f} MB)",
        "use a smaller or more compressed file, or a backend type that takes larger ones",
    )


def _unsupported_param(cfg: BackendConfig, wire: Wire) -> Problem | None:
    for name in TYPED_PARAMS:
        if getattr(cfg, name) is not None and name not in wire.params:
            return (
                name,
                f"{name} is not a parameter of backend type {cfg.type!r}",
                f"remove it (it takes {', '.join(sorted(wire.params))}), or put it under "
                "extra_body if the provider accepts it",
            )
    return None


_HOSTED_NAMES = {"web_search": "web search", "code_execution": "code execution"}
_HOSTED_NAMES["x_search"] = "X search"
_HOSTED_NAMES["file_search"] = "file search"
# What to use instead of a hosted tool the backend lacks, besides another backend type.
_INSTEAD = {
    "web_search": ", or give the agent an MCP server that does it (mcp_servers)",
    "code_execution": ", or give the agent an MCP server that does it (mcp_servers)",
    "file_search": ", or put the files in a context path (orchestrator.context_paths), "
    "where agents with a workspace (cwd) read them with the file tools",
}


def _unsupported_hosted(cfg: BackendConfig, wire: Wire) -> Problem | None:
    """A hosted-tool key the backend's provider has no tool for, naming what it offers."""
    for key, tool in cfg.hosted_keys():
        if tool in wire.hosted:
            continue
        offered = [k for k, t in HOSTED_KEYS if t in wire.hosted]
        hosts = sorted(t for t, p in PROFILES.items() if tool in p.wire.hosted)
        fix = f"remove {key}: backend type {cfg.type!r} "
        fix += f"offers {', '.join(offered)}" if offered else "offers no hosted tools"
        fix += f"; the backend types that host {_HOSTED_NAMES[tool]} are {', '.join(hosts)}"
        fix += _INSTEAD.get(tool, "")
        message = f"backend type {cfg.type!r} has no provider-hosted {_HOSTED_NAMES[tool]}"
        return (key, message, fix)
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
    """Check `cfg`, then build its backend.

    Raises:
        ConfigError: `check` found a problem, or a required key is missing.
    """
    problem = check(cfg)
    if problem is not None:
        key, message, fix = problem
        raise ConfigError(message, path=f"backend.{key}", fix=fix)
    return build(cfg, env=env)


def build(cfg: BackendConfig, *, env: Mapping[str, str] | None = None) -> Backend:
    """The backend for a `cfg` that `check` has passed.

    Raises:
        ConfigError: a required key, or a field the profile takes from the environment,
            is missing.
    """
    env = os.environ if env is None else env
    api_key = resolve_api_key(cfg, env)
    profile = PROFILES[cfg.type]
    return profile.wire.create(_with_env_defaults(cfg, profile, env), profile, api_key)


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
