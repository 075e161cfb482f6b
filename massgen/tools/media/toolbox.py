"""Media tools (`plan.py` decides which an agent gets, and who serves them).

    generate_media(prompt, mode, filename, ...)   an image or speech, written into the
                                                  agent's workspace
    read_media(file_path, prompt)                 an image, audio or video understood
                                                  (by the file's suffix); text back
    understand_image / understand_audio           the same, one kind each (the
    understand_video                              predecessor's tool names)

The calls are in `openai_calls.py` and `gemini_calls.py`, one module per SDK.

Effects: a generation writes one file, `Write(<workspace>/<filename>)`; an understanding
reads one, `Read(path)`. The request to the provider is what the config key asked for
(as with the agent's own model), so it is not a separate effect. Every file, made or
sent, is bounded by `orchestrator.max_media_bytes`; every call by the tool timeout.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
from collections.abc import AsyncGenerator, Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from massgen.config.schema import MassgenConfig
from massgen.core import safe_open
from massgen.core.effects import Effect, Read, Write
from massgen.core.toolbox import Toolbox, ToolContext, ToolResult, arguments_of
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.tools.media import gemini_calls, openai_calls
from massgen.tools.media.openai_calls import MediaFailed
from massgen.tools.media.plan import MediaPlan, Mode, Provider, check, plan
from massgen.tools.python import TIMEOUT_MARGIN_SECONDS, PythonToolbox, tool_from_function

EXTENSIONS: dict[Mode, str] = {"image": "png", "audio": "mp3", "video": "mp4"}
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
IMAGE_TYPES |= {".gif": "image/gif", ".webp": "image/webp"}
AUDIO_TYPES = {".mp3": "audio/mpeg", ".wav": "audio/wav", ".m4a": "audio/mp4"}
AUDIO_TYPES |= {".ogg": "audio/ogg", ".flac": "audio/flac", ".aac": "audio/aac"}
VIDEO_TYPES = {".mp4": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm"}
VIDEO_TYPES |= {".avi": "video/x-msvideo", ".mkv": "video/x-matroska"}
TOOL_NAMES = (
    "generate_media",
    "read_media",
    "understand_image",
    "understand_audio",
    "understand_video",
)
# Arguments that name the file a tool reads.
_FILE_ARGUMENTS = ("file_path", "image_path", "audio_path", "video_path")


class MediaToolbox:
    """One agent's media tools."""

    def __init__(self, media: MediaPlan, timeout_seconds: float) -> None:
        self._plan = media
        self._timeout = timeout_seconds
        self._workspace: Path | None = None
        offered = {
            "generate_media": bool(media.generate),
            "read_media": media.read_media,
            **{name: name in media.understand for name in TOOL_NAMES[2:]},
        }
        functions: dict[str, Callable[..., Any]] = {
            "generate_media": self.generate_media,
            "read_media": self.read_media,
            "understand_image": self.understand_image,
            "understand_audio": self.understand_audio,
            "understand_video": self.understand_video,
        }
        tools = [tool_from_function(functions[n], n) for n in TOOL_NAMES if offered[n]]
        self._box = PythonToolbox(tools, timeout_seconds=timeout_seconds)
        self._specs = tuple(self._annotated(spec) for spec in self._box.specs())

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """Raises ValueError for malformed arguments or a path that needs a workspace."""
        if call.name not in {spec.name for spec in self._specs}:
            return ()
        arguments = arguments_of(call.arguments)
        if call.name == "generate_media":
            return (Write(self._output(ctx.workspace, arguments)),)
        raw = next((arguments[k] for k in _FILE_ARGUMENTS if arguments.get(k)), "")
        return (Read(_located(ctx.workspace, str(raw))),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        self._workspace = ctx.workspace  # one agent, one workspace: the same every call
        return await self._box.call(call, ctx)

    def _annotated(self, spec: ToolSpec) -> ToolSpec:
        parameters = spec.parameters
        if spec.name == "generate_media":
            modes = list(self._plan.generate)
            properties = dict(parameters["properties"])
            described = properties["mode"].get("description", "")
            properties["mode"] = {"type": "string", "enum": modes, "description": described}
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
        mode: str | None = None,
        filename: str | None = None,
        size: str | None = None,
        voice: str = "alloy",
        instructions: str | None = None,
    ) -> str:
        """Generate an image or speech audio from a text prompt (the modes offered are those
        your setup serves), and save it in your workspace.

        Args:
            prompt: What to generate; for audio, the exact text to speak.
            mode: image, or audio (speech); default: the first offered.
            filename: Where to save it, relative to your workspace (default: from the prompt).
            size: For OpenAI images: a size such as 1024x1024.
            voice: For audio: the voice (alloy, echo, fable, onyx, nova, shimmer, ...).
            instructions: For audio: how to speak (tone, pace); not spoken.
        """
        mode = mode or next(iter(self._plan.generate))
        path = self._output(self._workspace, {"prompt": prompt, "mode": mode, "filename": filename})
        assert self._workspace is not None  # `_output` checked it
        _inside(self._workspace, path)
        provider = self._plan.generate[mode]  # type: ignore[index]  # checked in `_output`
        limit = self._plan.max_bytes
        if mode == "audio":
            chunks = openai_calls.speech(provider, prompt, voice, instructions)
            written = await _write_stream(self._workspace, path, chunks, limit)
        else:  # image: no provider makes videos (`plan.GENERATES`)
            if provider.api == "openai":
                data = await openai_calls.image(provider, prompt, size, limit)
            else:
                data = await gemini_calls.image(provider, prompt, limit)
            written = _write(self._workspace, path, data)
        shown = path.relative_to(self._workspace).as_posix()
        return f"Saved the {mode} as `{shown}` ({written} bytes, {provider.model})."

    async def read_media(self, file_path: str, prompt: str = "Describe this in detail.") -> str:
        """Understand an image, an audio file or a video (the kind from the file's suffix):
        images and videos are described by a model answering your prompt, audio is
        transcribed. Returns text.

        Args:
            file_path: The file, relative to your workspace, or a context path (absolute).
            prompt: What to look for or answer.
        """
        suffix = Path(file_path).suffix.lower()
        if suffix in IMAGE_TYPES:
            return await self.understand_image(file_path, prompt)
        if suffix in AUDIO_TYPES:
            return await self.understand_audio(file_path)
        if suffix in VIDEO_TYPES:
            return await self.understand_video(file_path, prompt)
        kinds = ", ".join(sorted({*IMAGE_TYPES, *AUDIO_TYPES, *VIDEO_TYPES}))
        raise MediaFailed(f"`{file_path}` is not a file this tool reads ({kinds})")

    async def understand_image(
        self, image_path: str, prompt: str = "What's in this image? Describe it in detail."
    ) -> str:
        """Look at an image with a vision model and answer the prompt about it.

        Args:
            image_path: The image (png, jpg, gif, webp), relative to your workspace or absolute.
            prompt: The question or instruction about the image.
        """
        data, mime = self._file(image_path, IMAGE_TYPES, "a png, jpg, gif or webp image")
        return await _describe(self._plan.vision, data, mime, prompt)

    async def understand_audio(self, audio_path: str) -> str:
        """Transcribe an audio file (mp3, wav, m4a, ogg, flac, aac) to text.

        Args:
            audio_path: The audio file, relative to your workspace or absolute.
        """
        data, mime = self._file(audio_path, AUDIO_TYPES, "an audio file this tool transcribes")
        provider = self._plan.hearing
        if provider.api == "google":
            prompt = "Transcribe this audio exactly; reply with the transcript only."
            return await gemini_calls.describe(provider, data, mime, prompt)
        return await openai_calls.transcribe(provider, Path(audio_path).name, data)

    async def understand_video(self, video_path: str, prompt: str = "Describe this video.") -> str:
        """Watch a video (mp4, mov, webm, avi, mkv) with Gemini and answer the prompt.

        Args:
            video_path: The video, relative to your workspace or absolute.
            prompt: The question or instruction about the video.
        """
        data, mime = self._file(video_path, VIDEO_TYPES, "a video (mp4, mov, webm, avi, mkv)")
        return await gemini_calls.describe(self._plan.watching, data, mime, prompt)

    def _file(self, raw: str, types: dict[str, str], kind: str) -> tuple[bytes, str]:
        path = _located(self._workspace, raw)
        mime = types.get(path.suffix.lower())
        if mime is None:
            raise MediaFailed(f"`{raw}` is not {kind}")
        return _read(path, self._plan.max_bytes, raw), mime


async def _describe(provider: Provider, data: bytes, mime: str, prompt: str) -> str:
    if provider.api == "google":
        return await gemini_calls.describe(provider, data, mime, prompt)
    return await openai_calls.describe(provider, data, mime, prompt)


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
    """A regular file of at most `limit` bytes, by the real path the engine decided on
    (its last name not followed; a FIFO refused, not waited on)."""
    real = Path(os.path.realpath(path))
    try:
        return safe_open.read_beneath(None, real, limit)
    except safe_open.Unsafe as error:
        if error.errno != errno.EFBIG:
            raise MediaFailed(f"`{shown}`: {error.strerror}") from None
        size = os.stat(real).st_size
        raise MediaFailed(f"`{shown}` is {size} bytes, above max_media_bytes ({limit})") from None
    except OSError as error:
        raise MediaFailed(f"`{shown}` cannot be read ({error.strerror})") from None


@contextlib.contextmanager
def _saving(workspace: Path, path: Path) -> Iterator[BinaryIO]:
    """A new file that replaces `path` (inside `workspace`, checked) when the block ends,
    written by the workspace's descriptor: a link planted on the way is not followed."""
    real = Path(os.path.realpath(workspace))
    rel = Path(os.path.realpath(path)).relative_to(real).as_posix()
    root = safe_open.open_root(real)
    try:
        with safe_open.atomic_file(root, rel) as out:
            yield out
    finally:
        os.close(root)


def _write(workspace: Path, path: Path, data: bytes) -> int:
    with _saving(workspace, path) as out:
        out.write(data)
    return len(data)


async def _write_stream(
    workspace: Path, path: Path, chunks: AsyncGenerator[bytes], limit: int
) -> int:
    """Writes the chunks to `path` (atomically), refusing past `limit` bytes; the stream
    is closed (its connection with it) on every exit."""
    total = 0
    async with contextlib.aclosing(chunks):
        with _saving(workspace, path) as out:
            async for chunk in chunks:
                total += len(chunk)
                if total > limit:
                    raise MediaFailed(f"the file is larger than max_media_bytes ({limit})")
                out.write(chunk)
    return total


def media_toolboxes(
    config: MassgenConfig, source: str | None = None, single: bool = False
) -> dict[str, Toolbox]:
    """Agent id -> its media tools, for the agents that have any. Raises ConfigError as
    `plan.check` does."""
    check(config, source=source, single=single)
    timeout = max(config.orchestrator.tool_timeout_seconds - TIMEOUT_MARGIN_SECONDS, 0.5)
    boxes: dict[str, Toolbox] = {}
    for index, agent in enumerate(config.agents):
        agent_plan = plan(config, agent, "agent" if single else f"agents[{index}]")
        if agent_plan.any:
            boxes[agent.id] = MediaToolbox(agent_plan, timeout)
    return boxes
