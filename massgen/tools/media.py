"""Media tools (`tools/media_plan.py` decides which an agent gets, and who serves them).

    generate_media(prompt, mode, filename, ...)   an image or speech, written into the
                                                  agent's workspace
    read_media(file_path, prompt)                 an image described by a vision model, or
                                                  audio transcribed (by the file's suffix)
    understand_image / understand_audio           the same, one kind each (the
    understand_video                              predecessor's tool names)

Calls go through the official `openai` SDK: `images.generate` (base64 images),
`audio.speech` (streamed), Chat Completions with an `image_url` part, and
`audio.transcriptions`. No provider generates video here (OpenAI's Sora API is shut
down). Video understanding has no provider here either: `understand_video` says so.

Effects: a generation writes one file, `Write(<workspace>/<filename>)`; an understanding
reads one, `Read(path)`. The network call to the provider is what the config key asked
for (as with the agent's own model), so it is not a separate effect. Every file, made or
sent, is bounded by `orchestrator.max_media_bytes`; every call by the tool timeout.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.config.schema import MassgenConfig
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.tools.base import Toolbox, ToolContext, ToolResult
from massgen.tools.effects import Effect, Read, Write
from massgen.tools.media_plan import MediaPlan, Mode, Provider, plan
from massgen.tools.python import TIMEOUT_MARGIN_SECONDS, PythonToolbox, tool_from_function

if TYPE_CHECKING:
    from openai import AsyncOpenAI

EXTENSIONS: dict[Mode, str] = {"image": "png", "audio": "mp3", "video": "mp4"}
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
IMAGE_TYPES |= {".gif": "image/gif", ".webp": "image/webp"}
AUDIO_SUFFIXES = frozenset({".mp3", ".mp4", ".mpeg", ".mpga", ".m4a", ".wav", ".webm", ".ogg"})
AUDIO_SUFFIXES |= {".flac"}
_ALL = ("generate_media", "read_media", "understand_image", "understand_audio", "understand_video")


class MediaFailed(Exception):
    """A media call that could not be made or did not succeed; the message is the model's."""


class MediaToolbox:
    """One agent's media tools; an `EffectfulToolbox`."""

    def __init__(self, media: MediaPlan, timeout_seconds: float) -> None:
        self._plan = media
        self._timeout = timeout_seconds
        self._workspace: Path | None = None
        wanted = {
            "generate_media": bool(media.generate),
            "read_media": media.read_media,
            **{name: name in media.understand for name in _ALL[2:]},
        }
        functions: dict[str, Callable[..., Any]] = {
            "generate_media": self.generate_media,
            "read_media": self.read_media,
            "understand_image": self.understand_image,
            "understand_audio": self.understand_audio,
            "understand_video": self.understand_video,
        }
        tools = [tool_from_function(functions[n], n) for n in _ALL if wanted[n]]
        self._box = PythonToolbox(tools, timeout_seconds=timeout_seconds)
        self._specs = tuple(self._annotated(spec) for spec in self._box.specs())

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """Raises ValueError for malformed arguments or a path that needs a workspace."""
        import json

        if call.name not in {spec.name for spec in self._specs}:
            return ()
        arguments = json.loads(call.arguments or "{}")
        if not isinstance(arguments, dict):
            raise ValueError("the arguments must be a JSON object.")
        if call.name == "generate_media":
            return (Write(self._output(ctx.workspace, arguments)),)
        raw = arguments.get("file_path") or arguments.get("image_path")
        raw = raw or arguments.get("audio_path") or arguments.get("video_path")
        return (Read(_located(ctx.workspace, str(raw or ""))),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        self._workspace = ctx.workspace  # one agent, one workspace: the same every call
        return await self._box.call(call, ctx)

    def _annotated(self, spec: ToolSpec) -> ToolSpec:
        parameters = spec.parameters
        if spec.name == "generate_media":
            modes = list(self._plan.generate)
            properties = dict(parameters["properties"])
            properties["mode"] = {**properties["mode"], "enum": modes, "default": modes[0]}
            parameters = {**parameters, "properties": properties}
        writes = spec.name == "generate_media"
        annotations = ToolAnnotations(read_only=not writes, destructive=False, open_world=True)
        return ToolSpec(spec.name, spec.description, parameters, annotations)

    def _output(self, workspace: Path | None, arguments: dict[str, Any]) -> Path:
        if workspace is None:
            raise ValueError("generate_media needs a workspace (`cwd:`)")
        mode = arguments.get("mode") or next(iter(self._plan.generate))
        if mode not in self._plan.generate:
            raise ValueError(f"mode must be one of {', '.join(self._plan.generate)}")
        filename = arguments.get("filename") or _default_name(str(arguments.get("prompt")), mode)
        return workspace / str(filename)

    # --- the tools (their signatures and docstrings are what the model sees) -------------

    async def generate_media(
        self,
        prompt: str,
        mode: str = "image",
        filename: str | None = None,
        size: str | None = None,
        voice: str = "alloy",
        instructions: str | None = None,
    ) -> str:
        """Generate an image or speech audio from a text prompt, and save it in your
        workspace. Returns the file's path in your workspace.

        Args:
            prompt: What to generate; for audio, the exact text to speak.
            mode: image, or audio (speech).
            filename: Where to save it, relative to your workspace (default: from the prompt).
            size: Image size such as 1024x1024.
            voice: For audio: the voice (alloy, echo, fable, onyx, nova, shimmer, ...).
            instructions: For audio: how to speak (tone, pace); not spoken.
        """
        path = self._output(self._workspace, {"prompt": prompt, "mode": mode, "filename": filename})
        assert self._workspace is not None  # `_output` checked it
        _inside(self._workspace, path)
        provider = self._plan.generate[mode]  # type: ignore[index]  # checked in `_output`
        limit = self._plan.max_bytes
        async with _client(provider) as client:
            if mode == "image":
                data = await _image(client, provider.model, prompt, size, limit)
                size_written = _write(path, data)
            elif mode == "audio":
                chunks = _speech(client, provider.model, prompt, voice, instructions)
                size_written = await _write_stream(path, chunks, limit)
            else:  # no provider generates video (`media_plan.GENERATES`)
                raise MediaFailed(f"{mode} generation is not available")
        shown = path.relative_to(self._workspace).as_posix()
        return f"Saved the {mode} as `{shown}` ({size_written} bytes, {provider.model})."

    async def read_media(self, file_path: str, prompt: str = "Describe this in detail.") -> str:
        """Understand an image (described by a vision model) or an audio file (transcribed);
        the kind is taken from the file's suffix. Returns text.

        Args:
            file_path: The file, relative to your workspace, or a context path (absolute).
            prompt: For images: what to look for or answer.
        """
        suffix = Path(file_path).suffix.lower()
        if suffix in IMAGE_TYPES:
            return await self.understand_image(file_path, prompt)
        if suffix in AUDIO_SUFFIXES:
            return await self.understand_audio(file_path)
        kinds = ", ".join(sorted(set(IMAGE_TYPES) | AUDIO_SUFFIXES))
        raise MediaFailed(f"`{file_path}` is not a file this tool reads ({kinds})")

    async def understand_image(
        self, image_path: str, prompt: str = "What's in this image? Describe it in detail."
    ) -> str:
        """Look at an image with a vision model and answer the prompt about it.

        Args:
            image_path: The image (png, jpg, gif, webp), relative to your workspace or absolute.
            prompt: The question or instruction about the image.
        """
        path = _located(self._workspace, image_path)
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime is None:
            raise MediaFailed(f"`{image_path}` is not a png, jpg, gif or webp image")
        data = _read(path, self._plan.max_bytes, image_path)
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        content: list[Any] = [
            {"type": "text", "text": prompt},
            {"type": "image_url", "image_url": {"url": url}},
        ]
        message: Any = {"role": "user", "content": content}
        provider = self._plan.vision
        async with _client(provider) as client:
            reply = await client.chat.completions.create(model=provider.model, messages=[message])
        text = reply.choices[0].message.content if reply.choices else None
        if not text:
            raise MediaFailed(f"{provider.model} returned no description")
        return text

    async def understand_audio(self, audio_path: str) -> str:
        """Transcribe an audio file (mp3, wav, m4a, ogg, flac, webm) to text.

        Args:
            audio_path: The audio file, relative to your workspace or absolute.
        """
        path = _located(self._workspace, audio_path)
        if path.suffix.lower() not in AUDIO_SUFFIXES:
            raise MediaFailed(f"`{audio_path}` is not an audio file this tool transcribes")
        data = _read(path, self._plan.max_bytes, audio_path)
        provider = self._plan.transcription
        async with _client(provider) as client:
            result = await client.audio.transcriptions.create(
                model=provider.model, file=(path.name, data)
            )
        return result.text or "(no speech)"

    async def understand_video(self, video_path: str, prompt: str = "Describe this video.") -> str:
        """Understand a video. Not available in this version: no provider here accepts
        video; extract frames (with a command) and use understand_image on them.

        Args:
            video_path: The video file.
            prompt: The question about the video.
        """
        raise MediaFailed(
            "no provider here understands video; extract frames (e.g. `ffmpeg -i in.mp4 "
            "-vf fps=1 frame_%02d.png`) and use understand_image on them"
        )


# --- provider calls --------------------------------------------------------------------


class _Client:
    """An `AsyncOpenAI` client for one call, closed after it."""

    def __init__(self, provider: Provider) -> None:
        self._provider = provider
        self._client: AsyncOpenAI | None = None

    async def __aenter__(self) -> AsyncOpenAI:
        from openai import AsyncOpenAI

        key = _key(self._provider)
        self._client = AsyncOpenAI(api_key=key, base_url=self._provider.base_url, max_retries=2)
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.close()


def _client(provider: Provider) -> _Client:
    return _Client(provider)


def _key(provider: Provider) -> str:
    if provider.api_key:
        return provider.api_key
    found = next((os.environ[n] for n in provider.key_env if os.environ.get(n)), None)
    if found is not None:
        return found
    if not provider.key_env:
        return "EMPTY"  # a local server that needs none; the SDK refuses an empty key
    raise MediaFailed(f"no API key for {provider.name}: set {provider.key_env[0]}")


async def _image(
    client: AsyncOpenAI, model: str, prompt: str, size: str | None, limit: int
) -> bytes:
    options: dict[str, Any] = {"size": size} if size else {}
    if model.startswith("dall-e"):
        options["response_format"] = "b64_json"  # gpt-image models always return base64
    result = await client.images.generate(model=model, prompt=prompt, n=1, **options)
    encoded = result.data[0].b64_json if result.data else None
    if not encoded:
        raise MediaFailed(f"{model} returned no image")
    if len(encoded) * 3 // 4 > limit:
        raise MediaFailed(f"the image is larger than max_media_bytes ({limit})")
    return base64.b64decode(encoded)


async def _speech(
    client: AsyncOpenAI, model: str, text: str, voice: str, instructions: str | None
) -> AsyncIterator[bytes]:
    options: dict[str, Any] = {"instructions": instructions} if instructions else {}
    async with client.audio.speech.with_streaming_response.create(
        model=model, voice=voice, input=text, response_format="mp3", **options
    ) as response:
        async for chunk in response.iter_bytes():
            yield chunk


# --- files -----------------------------------------------------------------------------


def _default_name(prompt: str, mode: Mode) -> str:
    """A stable name from the prompt, so that the effect and the call name the same file."""
    slug = "_".join(re.findall(r"[a-z0-9]+", prompt.lower())[:5])[:40] or mode
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:6]
    return f"{slug}_{digest}.{EXTENSIONS[mode]}"


def _located(workspace: Path | None, raw: str) -> Path:
    if not raw:
        raise ValueError("name the file")
    path = Path(raw)
    if path.is_absolute():
        return path
    if workspace is None:
        raise ValueError(f"`{raw}`: without a workspace, name the file by its absolute path")
    return workspace / path


def _inside(workspace: Path, path: Path) -> None:
    """The permission engine decides first; this holds even where it is switched off."""
    if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(workspace)):
        raise MediaFailed("generated files are saved inside your workspace; use a relative path")


def _read(path: Path, limit: int, shown: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > limit:
            raise MediaFailed(f"`{shown}` is {size} bytes, above max_media_bytes ({limit})")
        return path.read_bytes()
    except OSError as error:
        raise MediaFailed(f"`{shown}` cannot be read ({error.strerror})") from None


def _write(path: Path, data: bytes) -> int:
    temporary = _temporary(path)
    temporary.write_bytes(data)
    os.replace(temporary, path)
    return len(data)


async def _write_stream(path: Path, chunks: AsyncIterator[bytes], limit: int) -> int:
    """Writes the chunks to `path` (atomically), refusing past `limit` bytes."""
    temporary = _temporary(path)
    total = 0
    try:
        with temporary.open("wb") as out:
            async for chunk in chunks:
                total += len(chunk)
                if total > limit:
                    raise MediaFailed(f"the file is larger than max_media_bytes ({limit})")
                out.write(chunk)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return total


def _temporary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.partial")


def media_toolboxes(
    config: MassgenConfig, source: str | None = None, single: bool = False
) -> dict[str, Toolbox]:
    """Agent id -> its media tools, for the agents that have any. Raises ConfigError as
    `media_plan.check` does."""
    from massgen.tools import media_plan as media

    media.check(config, source=source, single=single)
    timeout = max(config.orchestrator.tool_timeout_seconds - TIMEOUT_MARGIN_SECONDS, 0.5)
    boxes: dict[str, Toolbox] = {}
    for index, agent in enumerate(config.agents):
        at = "agent" if single else f"agents[{index}]"
        agent_plan = plan(config, agent, at)
        if agent_plan.any:
            boxes[agent.id] = MediaToolbox(agent_plan, timeout)
    return boxes
