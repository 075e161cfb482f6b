"""Provider profiles: data, not subclasses.

A profile says where a provider lives, how it is authenticated, which models it defaults
to and offers, and whether it costs money; `wire` is the record of the API format it speaks
(`wires.py`). Adding an OpenAI-compatible provider is one row in `PROFILES`; the default team
and the setup wizard read the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import urlparse

from massgen.backends import wires
from massgen.backends.wires import Wire


@dataclass(frozen=True, slots=True)
class Profile:
    """Everything massgen knows about one provider (one backend `type`)."""

    name: str
    # None: the config must give `base_url`.
    base_url: str | None
    # Environment variables tried in order when the config has no `api_key`.
    key_env: tuple[str, ...]
    # The model a config that omits `model` gets. None: the config must give `model`.
    default_model: str | None
    key_required: bool
    wire: Wire = wires.CHAT_COMPLETIONS
    # Config fields that fall back to environment variables when the config leaves them
    # out, e.g. (("base_url", ("AZURE_OPENAI_ENDPOINT",)),); tried in order.
    env_defaults: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # False: the model cannot call functions, so workflow actions go as a JSON object.
    tools: bool = True
    # How the wizard and the default team name the provider.
    title: str = ""
    # The wizard's model menu. The first, chosen for cost and speed, is the model the
    # default team and the wizard start from. Empty: neither offers this provider.
    models: tuple[str, ...] = ()
    # True: runs in this process and costs nothing. A server on localhost may be a proxy
    # to a paid API, so only the embedded backend is known to be free.
    free: bool = False

    def key_in(self, env: Mapping[str, str]) -> str | None:
        """The name of the first of this provider's key variables set in `env`."""
        return next((name for name in self.key_env if env.get(name)), None)


# Sent when a local server needs no key; the SDK refuses an empty one.
NO_KEY = "EMPTY"

_P = Profile
# The order is the default team's order of preference among the providers with keys, and
# the wizard's order.
PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        # First-party APIs, each over its own wire format (one module per format); Gemini
        # (google-genai SDK, REST) and xAI (xai-sdk, gRPC) included.
        _P(
            "openai",
            "https://api.openai.com/v1",
            ("OPENAI_API_KEY",),
            "gpt-5.2",
            True,
            wires.RESPONSES,
            title="OpenAI",
            models=("gpt-5-mini", "gpt-5.2", "gpt-5-nano", "gpt-4.1"),
        ),
        _P(
            "azure_openai",
            None,
            ("AZURE_OPENAI_API_KEY",),
            None,
            True,
            wires.AZURE_RESPONSES,
            env_defaults=(
                ("base_url", ("AZURE_OPENAI_ENDPOINT",)),
                ("model", ("AZURE_OPENAI_DEPLOYMENT_NAME", "AZURE_OPENAI_DEPLOYMENT")),
                ("api_version", ("AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION")),
            ),
        ),
        _P(
            "claude",
            "https://api.anthropic.com",
            ("ANTHROPIC_API_KEY",),
            "claude-sonnet-4-6",
            True,
            wires.ANTHROPIC_MESSAGES,
            title="Anthropic Claude",
            models=("claude-haiku-4-5", "claude-sonnet-4-6", "claude-opus-4-6"),
        ),
        _P(
            "gemini",
            "https://generativelanguage.googleapis.com",
            ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
            "gemini-2.5-flash",
            True,
            wires.GEMINI,
            title="Google Gemini",
            models=(
                "gemini-2.5-flash",
                "gemini-3-flash-preview",
                "gemini-2.5-pro",
                "gemini-3-pro-preview",
            ),
        ),
        _P(
            "grok",
            "https://api.x.ai",
            ("XAI_API_KEY",),
            "grok-4",
            True,
            wires.GROK,
            title="xAI Grok",
            models=("grok-4-1-fast-non-reasoning", "grok-4", "grok-3-mini"),
        ),
        # OpenAI-compatible hosted providers: profiles over Chat Completions.
        _P(
            "groq",
            "https://api.groq.com/openai/v1",
            ("GROQ_API_KEY",),
            None,
            True,
            title="Groq",
            models=("llama-3.3-70b-versatile", "openai/gpt-oss-120b", "qwen/qwen3-32b"),
        ),
        _P(
            "cerebras",
            "https://api.cerebras.ai/v1",
            ("CEREBRAS_API_KEY",),
            None,
            True,
            title="Cerebras",
            models=("llama-3.3-70b", "llama3.1-8b"),
        ),
        _P(
            "openrouter",
            "https://openrouter.ai/api/v1",
            ("OPENROUTER_API_KEY",),
            None,
            True,
            title="OpenRouter",
            models=("openai/gpt-5-mini", "google/gemini-2.5-flash"),
            wire=wires.OPENROUTER,
        ),
        _P(
            "together",
            "https://api.together.xyz/v1",
            ("TOGETHER_API_KEY",),
            None,
            True,
            title="Together AI",
            models=("meta-llama/Llama-3.3-70B-Instruct-Turbo", "openai/gpt-oss-120b"),
        ),
        _P(
            "fireworks",
            "https://api.fireworks.ai/inference/v1",
            ("FIREWORKS_API_KEY",),
            None,
            True,
            title="Fireworks AI",
            models=(
                "accounts/fireworks/models/llama-v3p3-70b-instruct",
                "accounts/fireworks/models/gpt-oss-120b",
            ),
        ),
        # Nebius AI Studio is now Nebius Token Factory; the studio host still answers.
        _P(
            "nebius",
            "https://api.tokenfactory.nebius.com/v1",
            ("NEBIUS_API_KEY",),
            None,
            True,
            title="Nebius",
            models=("meta-llama/Llama-3.3-70B-Instruct", "openai/gpt-oss-120b"),
        ),
        _P(
            "moonshot",
            "https://api.moonshot.cn/v1",
            ("MOONSHOT_API_KEY", "KIMI_API_KEY"),
            None,
            True,
            title="Moonshot (Kimi)",
            models=("kimi-k2-0905-preview", "kimi-k2-thinking"),
        ),
        _P(
            "zai",
            "https://api.z.ai/api/paas/v4/",
            ("ZAI_API_KEY",),
            "glm-4.5",
            True,
            title="Z.ai (GLM)",
            models=("glm-4.5-air", "glm-4.6"),
        ),
        _P(
            "qwen",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            ("QWEN_API_KEY",),
            None,
            True,
            title="Alibaba Qwen",
            models=("qwen-plus", "qwen3-max"),
        ),
        _P(
            "nvidia_nim",
            "https://integrate.api.nvidia.com/v1",
            ("NVIDIA_API_KEY", "NGC_API_KEY"),
            None,
            True,
        ),
        _P("poe", "https://api.poe.com/v1", ("POE_API_KEY",), None, True),
        # Generic: any OpenAI-compatible URL; the key env var follows the host (`key_env_for`).
        _P("chatcompletion", None, (), None, key_required=False),
        _P("vllm", "http://localhost:8000/v1", ("VLLM_API_KEY",), None, key_required=False),
        _P("sglang", "http://localhost:30000/v1", ("SGLANG_API_KEY",), None, key_required=False),
        _P("lmstudio", "http://localhost:1234/v1", (), None, key_required=False),
        _P("ollama", "http://localhost:11434/v1", (), None, key_required=False),
        # llama.cpp in worker processes; `model` defaults to the built-in SmolLM2 GGUF (backends/local).
        _P(
            "local",
            None,
            (),
            "SmolLM2-135M-Instruct",
            False,
            wire=wires.LOCAL,
            tools=False,
            free=True,
        ),
    )
}
# The predecessor's agent-CLI types that run here as the same model over its API with
# massgen's own tools (the workspace's file tools, `execute_command` when enabled); the
# vendor CLI is not used. No `title` or `models`: the wizard and the default team leave them out.
AGENT_CLI_APIS = {
    "antigravity_cli": "gemini",  # Google's `agy` agent CLI, on Gemini models
}
PROFILES |= {
    cli: replace(PROFILES[api], name=cli, title="", models=())
    for cli, api in AGENT_CLI_APIS.items()
}
# Claude Code itself (`claude_code.py`): the config's or the environment's key, else the
# user's own Claude Code login; the model is Claude Code's default unless set.
PROFILES["claude_code"] = Profile(
    "claude_code", None, ("ANTHROPIC_API_KEY",), None, False, wire=wires.CLAUDE_CODE
)
# Gemini CLI itself (`gemini_cli.py`): likewise, with the user's own Gemini CLI login.
# Its workflow action is the JSON object its turn ends with (`tools=False`), not a tool.
PROFILES["gemini_cli"] = Profile(
    "gemini_cli",
    None,
    ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    None,
    False,
    wire=wires.GEMINI_CLI,
    tools=False,
)
# Codex itself (`codex.py`): the config's or the environment's key, else the user's own
# Codex login; the model is Codex's default unless set.
PROFILES["codex"] = Profile("codex", None, ("OPENAI_API_KEY",), None, False, wire=wires.CODEX)

# Host suffix -> key env vars, for the generic `chatcompletion` type. Matched on the URL's
# host at a dot boundary (the predecessor used raw substrings, and checked `nebius.com`
# while its own default URL was on `nebius.ai`).
KEY_ENV_BY_HOST: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cerebras.ai", ("CEREBRAS_API_KEY",)),
    ("together.xyz", ("TOGETHER_API_KEY",)),
    ("fireworks.ai", ("FIREWORKS_API_KEY",)),
    ("groq.com", ("GROQ_API_KEY",)),
    ("nebius.ai", ("NEBIUS_API_KEY",)),
    ("nebius.com", ("NEBIUS_API_KEY",)),
    ("openrouter.ai", ("OPENROUTER_API_KEY",)),
    ("z.ai", ("ZAI_API_KEY",)),
    ("bigmodel.cn", ("ZAI_API_KEY",)),
    ("moonshot.ai", ("MOONSHOT_API_KEY", "KIMI_API_KEY")),
    ("moonshot.cn", ("MOONSHOT_API_KEY", "KIMI_API_KEY")),
    ("nvidia.com", ("NVIDIA_API_KEY", "NGC_API_KEY")),
    ("poe.com", ("POE_API_KEY",)),
    ("aliyuncs.com", ("QWEN_API_KEY",)),
    ("openai.com", ("OPENAI_API_KEY",)),
    ("x.ai", ("XAI_API_KEY",)),
    ("googleapis.com", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    ("anthropic.com", ("ANTHROPIC_API_KEY",)),
)

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1"})


def host_of(url: str) -> str:
    return (urlparse(url).hostname or "").lower()


def is_local(url: str) -> bool:
    return host_of(url) in LOCAL_HOSTS


def key_env_for(profile: Profile, base_url: str | None) -> tuple[str, ...]:
    """The env vars that may hold the key for `profile` talking to `base_url`."""
    if profile.key_env or not base_url:
        return profile.key_env
    host = host_of(base_url)
    for suffix, names in KEY_ENV_BY_HOST:
        if host == suffix or host.endswith("." + suffix):
            return names
    return ()


def key_required(profile: Profile, base_url: str | None) -> bool:
    """Whether a call can work without a key. Unknown hosts may or may not need one; we
    never send some other provider's key to them, so a key for them comes from the config."""
    if base_url and is_local(base_url):
        return False
    if profile.name == "chatcompletion":
        return bool(key_env_for(profile, base_url))
    return profile.key_required
