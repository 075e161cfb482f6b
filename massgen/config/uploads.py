"""`upload_files:` under an agent's `backend:`: documents the provider's file search reads.

The predecessor's shape:

    upload_files:
      - file_path: docs/report.pdf        # beside the config file, else the working directory
      - file_path: https://example.com/paper.pdf   # downloaded at run start

At run start the files go to the provider (OpenAI: one vector store per agent), the
agent's requests carry the hosted `file_search` tool over them, and they are deleted
when the run ends (`runs/uploads.py`). Loading checks, without reading them, that
local files exist, are not too large and have a type file search takes.

Media the model reads as input, the predecessor's other entries:

      - image_path: diagram.png           # png, jpeg, gif, webp
      - audio_path: call.wav              # wav, mp3
      - video_path: demo.mp4              # mp4, mpeg, mov, avi, webm
      - image_path: https://example.com/chart.png   # downloaded at run start

are read at run start (at most 64 MB each, through the permission engine) and attached to
the task's user message of every request the agent makes (`runs/media.py`); the
backend's wire must take that kind of media (`Wire.media`).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from massgen.config.files import find_file
from massgen.core.errors import ConfigError
from massgen.core.types import MediaKind

# OpenAI's limits for file search: 512 MB a file; we also bound how many a run sends.
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_FILES = 20
# The file types OpenAI's file search parses (the predecessor checked the same list).
EXTENSIONS = frozenset(
    {".c", ".cpp", ".cs", ".css", ".doc", ".docx", ".go", ".html", ".java", ".js", ".json",
     ".md", ".pdf", ".php", ".pptx", ".py", ".rb", ".sh", ".tex", ".ts", ".txt"}
)  # fmt: skip
# Media as model input: the spec's bound on one file, and the MIME type of each suffix
# every provider that takes the kind reads (audio: what Chat Completions' input_audio takes).
MAX_MEDIA_BYTES = 64 * 1024 * 1024
MEDIA_TYPES: dict[MediaKind, dict[str, str]] = {
    "image": {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
              ".gif": "image/gif", ".webp": "image/webp"},
    "audio": {".wav": "audio/wav", ".mp3": "audio/mpeg"},
    "video": {".mp4": "video/mp4", ".mpeg": "video/mpeg", ".mpg": "video/mpeg",
              ".mov": "video/quicktime", ".avi": "video/x-msvideo", ".webm": "video/webm"},
}  # fmt: skip
MEDIA_KEYS: dict[str, MediaKind] = {
    "image_path": "image",
    "audio_path": "audio",
    "video_path": "video",
}


class _Entry(BaseModel):
    """What every `upload_files` entry tells of its file, from its `path`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @property
    def path(self) -> str:
        """A local path (made absolute at load) or an http(s) URL."""
        raise NotImplementedError

    @property
    def is_url(self) -> bool:
        return self.path.startswith(("http://", "https://"))

    @property
    def name(self) -> str:
        """The file name the provider sees (and cites)."""
        if self.is_url:
            return PurePosixPath(urlsplit(self.path).path).name
        return Path(self.path).name


class UploadFile(_Entry):
    """One document: a local path (made absolute at load) or an http(s) URL."""

    file_path: str = Field(min_length=1)

    @property
    def path(self) -> str:
        return self.file_path


class MediaFile(_Entry):
    """One image, audio or video file the model reads: exactly one of the three keys, a
    local path (made absolute at load) or an http(s) URL."""

    image_path: str | None = Field(default=None, min_length=1)
    audio_path: str | None = Field(default=None, min_length=1)
    video_path: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _exactly_one(self) -> MediaFile:
        given = [key for key in MEDIA_KEYS if getattr(self, key) is not None]
        if len(given) != 1:
            raise ValueError(
                f"an upload_files entry names one file: give one of {', '.join(MEDIA_KEYS)} "
                f"(this one gives {', '.join(given) or 'none'}); use one entry per file"
            )
        return self

    @property
    def key(self) -> str:
        return next(key for key in MEDIA_KEYS if getattr(self, key) is not None)

    @property
    def kind(self) -> MediaKind:
        return MEDIA_KEYS[self.key]

    @property
    def path(self) -> str:
        value = getattr(self, self.key)
        assert isinstance(value, str)
        return value

    @property
    def mime_type(self) -> str:
        """Its MIME type, from its suffix (checked at load)."""
        return MEDIA_TYPES[self.kind][PurePosixPath(self.name).suffix.lower()]


def _entry_kind(data: Any) -> str:
    """Which model reads an `upload_files` entry: a media key makes it media."""
    if isinstance(data, MediaFile):
        return "media"
    if isinstance(data, dict) and any(key in MEDIA_KEYS for key in data):
        return "media"
    return "file"


Upload = Annotated[
    Annotated[UploadFile, Tag("file")] | Annotated[MediaFile, Tag("media")],
    Discriminator(_entry_kind),
]


def documents(files: tuple[UploadFile | MediaFile, ...]) -> list[tuple[int, UploadFile]]:
    """The file-search documents among `files`, with each one's index in the list."""
    return [(i, f) for i, f in enumerate(files) if isinstance(f, UploadFile)]


def media(files: tuple[UploadFile | MediaFile, ...]) -> list[tuple[int, MediaFile]]:
    """The media entries among `files`, with each one's index in the list."""
    return [(i, f) for i, f in enumerate(files) if isinstance(f, MediaFile)]


def resolve(
    files: tuple[UploadFile | MediaFile, ...], source: str, at: str
) -> tuple[UploadFile | MediaFile, ...]:
    """`files` with each local path made absolute (the config file's directory first, then
    the working directory), after checking each one.

    Raises:
        ConfigError: naming the file, the key path (`at`.upload_files[i]) and the fix.
    """
    return tuple(
        _resolve_one(f, source, f"{at}.upload_files[{i}]")
        if isinstance(f, UploadFile)
        else _resolve_media(f, source, f"{at}.upload_files[{i}]")
        for i, f in enumerate(files)
    )


def _resolve_media(upload: MediaFile, source: str, at: str) -> MediaFile:
    where = f"{at}.{upload.key}"
    suffix = PurePosixPath(upload.name).suffix.lower()
    kinds = MEDIA_TYPES[upload.kind]
    if suffix not in kinds:
        raise ConfigError(
            f"`{upload.path}`: {suffix or 'a file without an extension'} is not "
            f"{'an' if upload.kind in ('image', 'audio') else 'a'} {upload.kind} type "
            "the providers read",
            file=source,
            path=where,
            fix=f"Use one of {', '.join(sorted(kinds))}",
        )
    if upload.is_url:
        return upload
    bound = f"a media file is at most {MAX_MEDIA_BYTES // 2**20} MB"
    file = _existing(upload.path, source, where, MAX_MEDIA_BYTES, bound, "Use a smaller file")
    return upload.model_copy(update={upload.key: str(file)})


def _resolve_one(upload: UploadFile, source: str, at: str) -> UploadFile:
    where = f"{at}.file_path"
    _check_type(upload, source, where)
    if upload.is_url:
        return upload
    bound = f"file search takes at most {MAX_FILE_BYTES // 2**20} MB a file"
    file = _existing(upload.file_path, source, where, MAX_FILE_BYTES, bound, "Split the file")
    return upload.model_copy(update={"file_path": str(file)})


def _existing(path: str, source: str, where: str, limit: int, bound: str, smaller: str) -> Path:
    """The local file `path` names, which must exist and be at most `limit` bytes."""
    file = find_file(path, source)
    if file is None:
        raise ConfigError(
            f"`{path}` does not exist (looked beside the config and in the working directory)",
            file=source,
            path=where,
            fix="Correct the path, or remove the entry",
        )
    size = file.stat().st_size
    if size > limit:
        raise ConfigError(
            f"`{file}` is {size / 2**20:.0f} MB; {bound}",
            file=source,
            path=where,
            fix=f"{smaller}, or remove the entry",
        )
    return file


def _check_type(upload: UploadFile, source: str, where: str) -> None:
    suffix = PurePosixPath(upload.name).suffix.lower()
    if suffix not in EXTENSIONS:
        raise ConfigError(
            f"`{upload.file_path}`: file search does not read {suffix or 'files without an extension'}",
            file=source,
            path=where,
            fix=f"Use one of {', '.join(sorted(EXTENSIONS))}",
        )
