"""Media tools (the predecessor's keys): which an agent gets, and who serves each.

    backend.enable_image_generation    `generate_media` with mode `image`
    backend.enable_audio_generation    ... mode `audio` (speech from text)
    backend.enable_video_generation    ... mode `video`
    backend.enable_multimodal_tools    `read_media`, and `generate_media` with every mode a
    (or orchestrator.*, inherited)     provider serves here
    orchestrator.<mode>_generation_backend / _model
                                       the provider (and model) of one mode
    backend.media_tools                `understand_image` / `understand_audio` /
                                       `understand_video`: where a predecessor config
                                       named the predecessor's own files in `custom_tools`

A mode's provider is its `<mode>_generation_backend`, else the agent's own when that
provider has the API. Only OpenAI's API (images, speech) is served here; OpenAI's video
API (Sora) is shut down, so no provider generates video. A mode
that an `enable_*_generation` key asks for and no provider serves is a ConfigError naming
the key, as is one for an agent without a workspace (`cwd`) to save it in; under
`enable_multimodal_tools` alone, such a mode is left out of `generate_media`.

Understanding goes to the agent's own provider when it speaks OpenAI's formats (images as
`image_url` parts of a Chat Completions message, audio through the transcription API),
else to OpenAI. Video understanding has no provider here: the tool says so.

Pure data and checks: no SDK is imported here (`tools/media.py` makes the calls); no layer below `tools` imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from massgen.backends.profiles import PROFILES, key_env_for
from massgen.backends.wires import CHAT_COMPLETIONS, RESPONSES
from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.core.errors import ConfigError

Mode = Literal["image", "audio", "video"]
MODES: tuple[Mode, ...] = get_args(Mode)
# The predecessor's tool files that a `custom_tools` entry may name; each becomes ours.
UnderstandTool = Literal["understand_image", "understand_audio", "understand_video"]

# Provider -> the generation modes its API has here.
GENERATES: dict[str, frozenset[Mode]] = {"openai": frozenset({"image", "audio"})}
DEFAULT_MODELS: dict[tuple[str, Mode], str] = {
    ("openai", "image"): "gpt-image-1",
    ("openai", "audio"): "gpt-4o-mini-tts",
}
_WHY_NOT: dict[Mode, str] = {
    "image": "",
    "audio": "",
    # The openai SDK (3.57) marks its `videos` API: "scheduled to permanently shut down on
    # September 24, 2026".
    "video": "OpenAI's Sora API is shut down",
}
# The predecessor's provider names that have no client here.
_ELSEWHERE = ("google", "grok", "openrouter", "elevenlabs")


@dataclass(frozen=True, slots=True)
class Provider:
    """Where calls go: a provider name, and the agent's own endpoint when it is the agent's
    provider (None: the provider's default endpoint and key, from the environment)."""

    name: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    key_env: tuple[str, ...] = ("OPENAI_API_KEY",)


@dataclass(frozen=True, slots=True)
class MediaPlan:
    """One agent's media tools."""

    generate: dict[Mode, Provider]  # empty: no `generate_media`
    read_media: bool
    understand: tuple[UnderstandTool, ...]
    vision: Provider  # images
    transcription: Provider  # audio
    max_bytes: int

    @property
    def any(self) -> bool:
        return bool(self.generate or self.read_media or self.understand)


def _own_provider(agent: AgentConfig) -> str | None:
    """The media provider that the agent's backend is, if any."""
    return "openai" if agent.backend.type == "openai" else None


def _openai_compatible(agent: AgentConfig) -> bool:
    profile = PROFILES.get(agent.backend.type)
    return profile is not None and profile.wire in (CHAT_COMPLETIONS, RESPONSES)


def plan(config: MassgenConfig, agent: AgentConfig, at: str) -> MediaPlan:
    """The media tools of `agent` (at key path `at`, e.g. `agents[0]`).

    Raises:
        ConfigError: a mode is asked for that no provider serves, or a provider is named
            that is not served here; the error names the key and what is available.
    """
    backend, orchestrator = agent.backend, config.orchestrator
    multimodal = backend.enable_multimodal_tools
    if multimodal is None:
        multimodal = orchestrator.enable_multimodal_tools
    asked = {
        "image": backend.enable_image_generation,
        "audio": backend.enable_audio_generation,
        "video": backend.enable_video_generation,
    }
    generate: dict[Mode, Provider] = {}
    for mode in MODES:
        if not (asked[mode] or multimodal):
            continue
        if not asked[mode] and backend.cwd is None:
            continue  # nowhere to save it; `check` refuses this for an asked-for mode
        provider = _generator(config, agent, mode, at, required=asked[mode])
        if provider is not None:
            generate[mode] = provider
    return MediaPlan(
        generate=generate,
        read_media=multimodal,
        understand=backend.media_tools,
        vision=_understander(agent, "gpt-5-mini"),
        transcription=_transcriber(agent),
        max_bytes=orchestrator.max_media_bytes,
    )


def _generator(
    config: MassgenConfig, agent: AgentConfig, mode: Mode, at: str, required: bool
) -> Provider | None:
    """The provider of `mode`; None where it is not `required` (asked for by its own key)
    and nothing serves it (the predecessor fell back the same way).

    Raises:
        ConfigError: `required` and nothing serves it, or a provider name that is unknown.
    """
    orchestrator = config.orchestrator
    named = getattr(orchestrator, f"{mode}_generation_backend")
    model = getattr(orchestrator, f"{mode}_generation_model")
    if named is not None and named not in GENERATES and named not in _ELSEWHERE:
        raise ConfigError(
            f"unknown {mode} generation provider {named!r}",
            path=f"orchestrator.{mode}_generation_backend",
            fix=_serving(mode),
        )
    name = named if named is not None else _own_provider(agent)
    if name is None or mode not in GENERATES.get(name, frozenset()):
        if not required:
            return None
        if named is not None:
            where = "has no client here" if named in _ELSEWHERE else f"has no {mode} generation"
            problem, path = f"{mode} generation provider {named!r} {where}", "orchestrator"
            path = f"orchestrator.{mode}_generation_backend"
        else:
            problem = f"backend type {agent.backend.type!r} has no {mode} generation API here"
            path = f"{at}.backend.enable_{mode}_generation"
        raise ConfigError(problem, path=path, fix=_serving(mode))
    own_endpoint = _own_provider(agent) == name
    return Provider(
        name,
        model or DEFAULT_MODELS[(name, mode)],
        base_url=agent.backend.base_url if own_endpoint else None,
        api_key=agent.backend.api_key if own_endpoint else None,
    )


def _serving(mode: Mode) -> str:
    serving = sorted(p for p, modes in GENERATES.items() if mode in modes)
    if not serving:
        return f"Remove the key: no provider generates {mode} here ({_WHY_NOT[mode]})"
    return (
        f"Set orchestrator.{mode}_generation_backend to {' or '.join(serving)}, or remove the key"
    )


def _understander(agent: AgentConfig, default_model: str) -> Provider:
    """The agent's own endpoint and model when it speaks OpenAI's formats, else OpenAI."""
    if _openai_compatible(agent):
        profile = PROFILES[agent.backend.type]
        base_url = agent.backend.base_url or profile.base_url
        return Provider(
            agent.backend.type,
            agent.backend.model or profile.default_model or default_model,
            base_url=base_url,
            api_key=agent.backend.api_key,
            key_env=key_env_for(profile, base_url),
        )
    return Provider("openai", default_model)


def _transcriber(agent: AgentConfig) -> Provider:
    """OpenAI's transcription model, at the agent's endpoint when the agent is OpenAI's."""
    if _own_provider(agent) == "openai":
        return Provider(
            "openai",
            "gpt-4o-transcribe",
            base_url=agent.backend.base_url,
            api_key=agent.backend.api_key,
        )
    return Provider("openai", "gpt-4o-transcribe")


def wanted(config: MassgenConfig) -> bool:
    """Whether any agent may have media tools (cheap: no plan is made)."""
    return config.orchestrator.enable_multimodal_tools or any(
        a.backend.enable_image_generation
        or a.backend.enable_audio_generation
        or a.backend.enable_video_generation
        or a.backend.enable_multimodal_tools
        or a.backend.media_tools
        for a in config.agents
    )


def check(config: MassgenConfig, *, source: str | None = None, single: bool = False) -> None:
    """Raises the first media-tool problem as a ConfigError naming file and key path."""
    for index, agent in enumerate(config.agents):
        at = "agent" if single else f"agents[{index}]"
        try:
            media = plan(config, agent, at)
        except ConfigError as error:
            raise ConfigError(error.message, file=source, path=error.path, fix=error.fix) from None
        if media.generate and agent.backend.cwd is None:
            first = next(iter(media.generate))
            raise ConfigError(
                f"`generate_media` writes its {first} into the agent's workspace, and this "
                "agent has none",
                file=source,
                path=f"{at}.backend.cwd",
                fix="Give the agent a workspace (`cwd: workspace1`)",
            )
