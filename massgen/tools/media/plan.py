"""Media tools (the predecessor's flat keys; `backend.media:` holds the same, as
`config/backend_groups.MediaConfig` reads them): which an agent gets, and who serves each.

    backend.enable_image_generation    `generate_media` with mode `image`
    backend.enable_audio_generation    ... mode `audio` (speech from text)
    backend.enable_video_generation    ... mode `video`
    backend.enable_multimodal_tools    `read_media`, and `generate_media` with every mode a
    (or orchestrator.*, inherited)     provider serves
    orchestrator.<mode>_generation_backend / _model
                                       the provider (and model) of one mode
    backend.media_tools                `understand_image` / `understand_audio` /
                                       `understand_video`: where a predecessor config
                                       named the predecessor's own files in `custom_tools`

Generation, by provider (the predecessor's names for them):

    openai   image (`images.generate`), audio (`audio.speech`)
    google   image (Gemini's image models), through google-genai

No provider makes videos here: OpenAI's video API (Sora) is shut down, and google-genai
makes Veo videos on Vertex AI only. `enable_video_generation` is therefore a ConfigError
that says so.

A mode's provider is its `<mode>_generation_backend`, else the agent's own provider when
it has the API (an `openai` or `gemini` backend). A mode that an `enable_*_generation`
key asks for and no provider serves is a ConfigError naming the key, as is one for an
agent without a workspace (`cwd`) to save it in; under `enable_multimodal_tools` alone,
such a mode is left out of `generate_media` (the predecessor fell back the same way).

Understanding goes to the agent's own provider where it can: a Gemini agent's model for
images, audio and video; an agent that speaks OpenAI's formats for images (`image_url`
parts of a Chat Completions message); OpenAI's transcription for an OpenAI agent's audio.
Otherwise images and audio go to OpenAI and video to Gemini (keys from the environment),
as in the predecessor.

Pure data and checks: no SDK is imported here (`toolbox.py` makes the calls).
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
Api = Literal["openai", "google"]  # which SDK a provider is called through
UnderstandTool = Literal["understand_image", "understand_audio", "understand_video"]

# Provider -> the generation modes its API has here.
GENERATES: dict[Api, frozenset[Mode]] = {
    "openai": frozenset({"image", "audio"}),
    "google": frozenset({"image"}),
}
DEFAULT_MODELS: dict[tuple[Api, Mode], str] = {
    ("openai", "image"): "gpt-image-1",
    ("openai", "audio"): "gpt-4o-mini-tts",
    ("google", "image"): "gemini-2.5-flash-image",
}
OPENAI_UNDERSTANDS = "gpt-5-mini"
OPENAI_TRANSCRIBES = "gpt-4o-transcribe"
GEMINI_UNDERSTANDS = "gemini-2.5-flash"
KEY_ENV: dict[Api, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
# The predecessor's provider names that have no client here.
_ELSEWHERE = ("grok", "openrouter", "elevenlabs")
# The openai SDK (3.57) marks its `videos` API "scheduled to permanently shut down on
# September 24, 2026"; google-genai (3.6) makes Veo videos on Vertex AI only.
_NO_VIDEO = "OpenAI's video API (Sora) is shut down, and Veo is on Vertex AI only"


@dataclass(frozen=True, slots=True)
class Provider:
    """Where calls go: which API, which model, and the agent's own endpoint and key when
    it is the agent's provider (None: the API's default endpoint, the key from `key_env`)."""

    api: Api
    model: str
    base_url: str | None = None
    api_key: str | None = None
    key_env: tuple[str, ...] = ("OPENAI_API_KEY",)
    name: str = ""  # the backend type, where it is the agent's own

    @property
    def title(self) -> str:
        return self.name or self.api


@dataclass(frozen=True, slots=True)
class MediaPlan:
    """One agent's media tools."""

    generate: dict[Mode, Provider]  # empty: no `generate_media`
    read_media: bool
    understand: tuple[UnderstandTool, ...]
    vision: Provider  # images
    hearing: Provider  # audio
    watching: Provider  # video (Gemini)
    max_bytes: int

    @property
    def any(self) -> bool:
        return bool(self.generate or self.read_media or self.understand)


def _own_api(agent: AgentConfig) -> Api | None:
    """The media API that the agent's backend is, if any."""
    return {"openai": "openai", "gemini": "google"}.get(agent.backend.type)  # type: ignore[return-value]


def _own(agent: AgentConfig, api: Api, model: str) -> Provider:
    """`api` at the agent's own endpoint and key when the agent is that provider."""
    if _own_api(agent) != api:
        return Provider(api, model, key_env=KEY_ENV[api])
    backend = agent.backend
    profile = PROFILES[backend.type]
    return Provider(
        api,
        model,
        base_url=backend.base_url,
        api_key=backend.api_key,
        key_env=profile.key_env,
        name=backend.type,
    )


def plan(config: MassgenConfig, agent: AgentConfig, at: str) -> MediaPlan:
    """The media tools of `agent` (at key path `at`, e.g. `agents[0]`).

    Raises:
        ConfigError: a mode is asked for that no provider serves, or a provider is named
            that is not served here; the error names the key and what is available.
    """
    backend, media, orchestrator = agent.backend, agent.backend.media, config.orchestrator
    multimodal = media.multimodal_tools
    if multimodal is None:
        multimodal = orchestrator.enable_multimodal_tools
    asked = {
        "image": media.image_generation,
        "audio": media.audio_generation,
        "video": media.video_generation,
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
        understand=media.tools,
        vision=_vision(agent),
        hearing=_hearing(agent),
        watching=_own(agent, "google", _gemini_model(agent)),
        max_bytes=orchestrator.max_media_bytes,
    )


def _generator(
    config: MassgenConfig, agent: AgentConfig, mode: Mode, at: str, required: bool
) -> Provider | None:
    """The provider of `mode`; None where it is not `required` (asked for by its own key)
    and nothing serves it.

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
    api = named if named is not None else _own_api(agent)
    if api not in GENERATES or mode not in GENERATES[api]:
        if not required:
            return None
        if named is not None:
            where = "has no client here" if named in _ELSEWHERE else f"has no {mode} generation"
            problem = f"{mode} generation provider {named!r} {where}"
            path = f"orchestrator.{mode}_generation_backend"
        else:
            problem = f"backend type {agent.backend.type!r} has no {mode} generation API here"
            path = f"{at}.backend.enable_{mode}_generation"
        raise ConfigError(problem, path=path, fix=_serving(mode))
    return _own(agent, api, model or DEFAULT_MODELS[(api, mode)])


def _serving(mode: Mode) -> str:
    serving = sorted(p for p, modes in GENERATES.items() if mode in modes)
    if not serving:
        return f"Remove the key: no provider makes {mode}s here ({_NO_VIDEO})"
    return (
        f"Set orchestrator.{mode}_generation_backend to {' or '.join(serving)}, or remove the key"
    )


def _gemini_model(agent: AgentConfig) -> str:
    if agent.backend.type == "gemini" and agent.backend.model:
        return agent.backend.model
    return GEMINI_UNDERSTANDS


def _vision(agent: AgentConfig) -> Provider:
    """A Gemini agent's own model; else the agent's own endpoint and model when it speaks
    OpenAI's formats; else OpenAI."""
    if _own_api(agent) == "google":
        return _own(agent, "google", _gemini_model(agent))
    profile = PROFILES.get(agent.backend.type)
    if profile is None or profile.wire not in (CHAT_COMPLETIONS, RESPONSES):
        return Provider("openai", OPENAI_UNDERSTANDS)
    base_url = agent.backend.base_url or profile.base_url
    return Provider(
        "openai",
        agent.backend.model or profile.default_model or OPENAI_UNDERSTANDS,
        base_url=base_url,
        api_key=agent.backend.api_key,
        key_env=key_env_for(profile, base_url),
        name=agent.backend.type,
    )


def _hearing(agent: AgentConfig) -> Provider:
    """A Gemini agent's own model; else OpenAI's transcription (at the agent's endpoint
    when the agent is OpenAI's)."""
    if _own_api(agent) == "google":
        return _own(agent, "google", _gemini_model(agent))
    return _own(agent, "openai", OPENAI_TRANSCRIBES)


def wanted(config: MassgenConfig) -> bool:
    """Whether any agent may have media tools (cheap: no plan is made)."""
    return config.orchestrator.enable_multimodal_tools or any(
        a.backend.media.image_generation
        or a.backend.media.audio_generation
        or a.backend.media.video_generation
        or a.backend.media.multimodal_tools
        or a.backend.media.tools
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
