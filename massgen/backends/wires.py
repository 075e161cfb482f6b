"""The wire formats: one `Wire` record per API format, naming the module that speaks it,
the check a config must pass for it, and the generation parameters it accepts.

Importing this module loads no provider SDK: a record reaches its module's `create`
through a small loader that imports the module only when a backend is built, and the
checks import nothing heavier than the wire module itself (whose SDK imports are lazy).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from massgen.core.types import HostedTool, MediaKind

if TYPE_CHECKING:
    from massgen.backends.base import Backend
    from massgen.backends.profiles import Profile
    from massgen.config.schema import BackendConfig

Problem = tuple[str, str, str]  # (config key, what is wrong, how to fix it)
# Ours (a `GenerationParams` field) -> the request field it fills, for each parameter a
# format sends. A dotted name nests (`reasoning.effort`); None: the wire module builds its
# own field from the value (Anthropic's `thinking`, Gemini's `thinking_config`).
ParamNames = Mapping[str, str | None]
Create = Callable[["BackendConfig", "Profile", str], "Backend"]
Check = Callable[["BackendConfig", "Profile"], "Problem | None"]


@dataclass(frozen=True, slots=True)
class Wire:
    name: str
    # Imports the wire module (and so its SDK) and returns its entry point.
    load: Callable[[], Create]
    # What a config must satisfy beyond the schema; loads no SDK.
    check: Check
    # The generation parameters this format sends, and where; a config that sets another
    # one is refused rather than silently dropped (`common.wire_params` places them).
    params: ParamNames
    # The provider-hosted tools the format can switch on (`enable_web_search`, ...); a
    # config that asks for another is refused, naming these.
    hosted: frozenset[HostedTool] = frozenset()
    # The media a user message may carry (`upload_files` image/audio/video entries), each
    # sent as the provider's own content part; a config with another kind is refused.
    media: frozenset[MediaKind] = frozenset()
    # The most a media file of a kind may be once base64-encoded, where the provider
    # documents a bound below massgen's own (`MAX_MEDIA_BYTES`); checked at load.
    media_limits: tuple[tuple[MediaKind, int], ...] = ()
    # The format can ask for strict tool use (`enable_strict_tool_use`).
    strict_tools: bool = False
    # The format sends Anthropic beta names (`betas`) as the `anthropic-beta` header.
    beta_headers: bool = False

    def create(self, cfg: BackendConfig, profile: Profile, api_key: str) -> Backend:
        return self.load()(cfg, profile, api_key)


# --- entry points, imported when a backend is built ---------------------------------------


def _entry(module: str, name: str = "create") -> Callable[[], Create]:
    """A loader of `massgen.backends.<module>.<name>`: it imports the module (and so its
    SDK) only when called."""

    def load() -> Create:
        entry: Create = getattr(importlib.import_module(f"massgen.backends.{module}"), name)
        return entry

    return load


# --- checks ---------------------------------------------------------------------------------


def check_http(cfg: BackendConfig, profile: Profile) -> Problem | None:
    """An HTTP wire needs a model and an http(s) base URL, from the config, the profile or
    (for fields the profile lists in `env_defaults`) the environment at `create` time."""
    from_env = dict(profile.env_defaults)
    if not cfg.model and not profile.default_model and "model" not in from_env:
        return ("model", f"backend type {cfg.type!r} needs a model", _model_fix(profile))
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


def _model_fix(profile: Profile) -> str:
    from massgen.backends.profiles import is_local

    if profile.base_url and is_local(profile.base_url):
        return "set model to a model the local server has loaded"
    return f"set model to one of {profile.name}'s model ids"


def _check_grok(cfg: BackendConfig, profile: Profile) -> Problem | None:
    from massgen.backends import grok  # cheap: xai_sdk and grpc load only on create

    return grok.check(cfg)


def _check_local(cfg: BackendConfig, profile: Profile) -> Problem | None:
    from massgen.backends import local  # cheap: llama_cpp is imported only to load a model

    return local.check(cfg)


def _check_claude_code(cfg: BackendConfig, profile: Profile) -> Problem | None:
    """Claude Code needs the SDK that bundles it. (Its workspace: an agent without `cwd`
    gets one named after it, `AgentConfig`; a subagent's is set per child.)"""
    import importlib.util

    if importlib.util.find_spec("claude_agent_sdk") is None:
        return (
            "type",
            "Claude Code is not installed (the claude-agent-sdk package bundles it)",
            "pip install 'massgen[claude-code]', or use type: claude to run the same model "
            "over Anthropic's API with massgen's own tools",
        )
    return None


def _check_gemini_cli(cfg: BackendConfig, profile: Profile) -> Problem | None:
    """Gemini CLI is an npm package, found on PATH. (Its workspace: as Claude Code's.)"""
    import shutil

    from massgen.backends.gemini_cli_tools import COMMAND, NPM_PACKAGE

    if shutil.which(COMMAND) is None:
        return (
            "type",
            f"Gemini CLI is not installed (no `{COMMAND}` on PATH)",
            f"npm install -g {NPM_PACKAGE}, or use type: gemini to run the same model over "
            "the Gemini API with massgen's own tools",
        )
    return None


def _check_codex(cfg: BackendConfig, profile: Profile) -> Problem | None:
    """Codex needs its CLI (`codex_tools.find_cli`); its app server is what we speak."""
    import os

    from massgen.backends import codex_tools  # cheap: stdlib only

    if codex_tools.find_cli(cfg.codex_path, os.environ) is None:
        where = (
            f"`codex_path` ({cfg.codex_path}) is not an executable file"
            if cfg.codex_path
            else f"no `codex` on PATH, ${codex_tools.PATH_ENV}, massgen[codex] or massgen's cache"
        )
        return (
            "codex_path" if cfg.codex_path else "type",
            f"the Codex CLI is not installed ({where})",
            f"{codex_tools.INSTALL} (or set codex_path), or use type: openai to run the "
            "same model over OpenAI's Responses API with massgen's own tools",
        )
    return None


# --- the formats ----------------------------------------------------------------------------

# Chat Completions (and xAI's SDK) take them under our names.
_CHAT_PARAMS: ParamNames = {
    name: name
    for name in (
        "frequency_penalty",
        "max_tokens",
        "presence_penalty",
        "reasoning_effort",
        "seed",
        "stop",
        "temperature",
        "top_p",
    )
}
# The Responses API has no seed, stop or penalties.
_RESPONSES_PARAMS: ParamNames = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_output_tokens",
    "reasoning_effort": "reasoning.effort",
    "reasoning_summary": "reasoning.summary",
    "verbosity": "text.verbosity",
}
# Temperature and top_p travel in the body as the API defines them (the SDK has no
# keyword for them), beside `extra_body`'s fields.
_ANTHROPIC_PARAMS: ParamNames = {
    "temperature": "extra_body.temperature",
    "top_p": "extra_body.top_p",
    "max_tokens": None,  # with the thinking budget added, or the module's default
    "stop": "stop_sequences",
    "reasoning_effort": None,  # `output_config.effort`, in Anthropic's levels
    "thinking_budget": None,  # `thinking: {type: enabled, budget_tokens}`
}
# GenerateContentConfig's names; effort and the budget become its `thinking_config`.
_GEMINI_PARAMS: ParamNames = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_output_tokens",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "stop": "stop_sequences",
    "reasoning_effort": None,
    "thinking_budget": None,
}
# llama.cpp's `create_chat_completion` keywords; it has no reasoning effort.
_LOCAL_PARAMS: ParamNames = {k: v for k, v in _CHAT_PARAMS.items() if k != "reasoning_effort"}

_IMAGES: frozenset[MediaKind] = frozenset({"image"})
# Chat Completions: `image_url` and `input_audio` content parts.
CHAT_COMPLETIONS = Wire(
    "chatcompletion",
    _entry("chat_completions"),
    check_http,
    _CHAT_PARAMS,
    media=frozenset({"image", "audio"}),
)
_SEARCH_AND_CODE: frozenset[HostedTool] = frozenset({"web_search", "code_execution"})
# OpenRouter speaks Chat Completions and hosts web search for any model: its `web` plugin,
# whose citations come back as `url_citation` annotations (`chat_completions.py`).
OPENROUTER = replace(CHAT_COMPLETIONS, hosted=frozenset({"web_search"}))
# Responses file search reads vector stores uploaded at run start (`upload_files`).
RESPONSES = Wire(
    "responses",
    _entry("responses"),
    check_http,
    _RESPONSES_PARAMS,
    _SEARCH_AND_CODE | {"file_search"},
    _IMAGES,  # `input_image`
)
# Azure OpenAI's Responses API hosts the code interpreter and file search but not
# OpenAI's web search.
AZURE_RESPONSES = Wire(
    "azure_responses",
    _entry("responses", "create_azure"),
    check_http,
    _RESPONSES_PARAMS,
    frozenset({"code_execution", "file_search"}),
    _IMAGES,
)
ANTHROPIC_MESSAGES = Wire(
    "anthropic",
    _entry("anthropic_messages"),
    check_http,
    _ANTHROPIC_PARAMS,
    _SEARCH_AND_CODE,
    _IMAGES,  # `image` blocks with a base64 source
    # "image exceeds 5 MB maximum": the API bounds the base64 text, not the file.
    media_limits=(("image", 5 * 2**20),),
    strict_tools=True,
    beta_headers=True,
)
# Gemini: `inline_data` parts of any of the three.
GEMINI = Wire(
    "gemini",
    _entry("gemini"),
    check_http,
    _GEMINI_PARAMS,
    _SEARCH_AND_CODE,
    frozenset({"image", "audio", "video"}),
)
# xAI: `image_url` content (png, jpeg: `grok.check`).
GROK = Wire(
    "grok", _entry("grok"), _check_grok, _CHAT_PARAMS, _SEARCH_AND_CODE | {"x_search"}, _IMAGES
)
# Claude Code's own agent loop (`claude_code.py`): no generation parameters of ours;
# `enable_web_search` gives it its own WebSearch and WebFetch tools.
CLAUDE_CODE = Wire(
    "claude_code",
    _entry("claude_code"),
    _check_claude_code,
    {},
    frozenset({"web_search"}),
)
# Gemini CLI's own agent loop over ACP (`gemini_cli.py`); `enable_web_search` gives it its
# own web tools.
GEMINI_CLI = Wire(
    "gemini_cli",
    _entry("gemini_cli"),
    _check_gemini_cli,
    {},
    frozenset({"web_search"}),
)
# Codex's own agent loop (`codex.py`): of our generation parameters only the reasoning
# effort (its `model_reasoning_effort`, as the predecessor's codex configs set it);
# `enable_web_search` turns on its web search and its commands' network.
CODEX = Wire(
    "codex", _entry("codex"), _check_codex, {"reasoning_effort": None}, frozenset({"web_search"})
)
LOCAL = Wire("local", _entry("local"), _check_local, _LOCAL_PARAMS)

WIRES: tuple[Wire, ...] = (
    CHAT_COMPLETIONS,
    RESPONSES,
    AZURE_RESPONSES,
    ANTHROPIC_MESSAGES,
    GEMINI,
    GROK,
    LOCAL,
    CLAUDE_CODE,
    GEMINI_CLI,
    CODEX,
)
