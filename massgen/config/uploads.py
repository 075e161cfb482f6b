"""`upload_files:` under an agent's `backend:`: documents the provider's file search reads.

The predecessor's shape:

    upload_files:
      - file_path: docs/report.pdf        # beside the config file, else the working directory
      - file_path: https://example.com/paper.pdf   # downloaded at run start

At run start the files go to the provider (OpenAI: one vector store per agent), the
agent's requests carry the hosted `file_search` tool over them, and they are deleted
when the run ends (`massgen/uploads.py`). Loading checks, without reading them, that
local files exist, are not too large and have a type file search takes. The
predecessor's `image_path`, `audio_path` and `video_path` entries (media as model input)
are refused.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from massgen.config.files import find_file
from massgen.core.errors import ConfigError

# OpenAI's limits for file search: 512 MB a file; we also bound how many a run sends.
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_FILES = 20
# The file types OpenAI's file search parses (the predecessor checked the same list).
EXTENSIONS = frozenset(
    {".c", ".cpp", ".cs", ".css", ".doc", ".docx", ".go", ".html", ".java", ".js", ".json",
     ".md", ".pdf", ".php", ".pptx", ".py", ".rb", ".sh", ".tex", ".ts", ".txt"}
)  # fmt: skip
_MEDIA = ("image_path", "audio_path", "video_path")


class UploadFile(BaseModel):
    """One document: a local path (made absolute at load) or an http(s) URL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file_path: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _no_media(cls, data: Any) -> Any:
        if isinstance(data, dict):
            media = next((key for key in _MEDIA if key in data), None)
            if media is not None:
                raise ValueError(
                    f"`{media}` (images, audio or video as model input) is not supported in "
                    "this version; upload_files takes `file_path:` documents for the "
                    "provider's file search. Remove the entry"
                )
        return data

    @property
    def is_url(self) -> bool:
        return self.file_path.startswith(("http://", "https://"))

    @property
    def name(self) -> str:
        """The file name the provider sees (and cites)."""
        if self.is_url:
            return PurePosixPath(urlsplit(self.file_path).path).name
        return Path(self.file_path).name


def resolve(files: tuple[UploadFile, ...], source: str, at: str) -> tuple[UploadFile, ...]:
    """`files` with each local path made absolute (the config file's directory first, then
    the working directory), after checking each one.

    Raises:
        ConfigError: naming the file, the key path (`at`.upload_files[i]) and the fix.
    """
    return tuple(_resolve_one(f, source, f"{at}.upload_files[{i}]") for i, f in enumerate(files))


def _resolve_one(upload: UploadFile, source: str, at: str) -> UploadFile:
    where = f"{at}.file_path"
    _check_type(upload, source, where)
    if upload.is_url:
        return upload
    file = find_file(upload.file_path, source)
    if file is None:
        raise ConfigError(
            f"`{upload.file_path}` does not exist (looked beside the config and in the "
            "working directory)",
            file=source,
            path=where,
            fix="Correct the path, or remove the entry",
        )
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ConfigError(
            f"`{file}` is {size / 2**20:.0f} MB; file search takes at most "
            f"{MAX_FILE_BYTES // 2**20} MB a file",
            file=source,
            path=where,
            fix="Split the file, or remove the entry",
        )
    return upload.model_copy(update={"file_path": str(file)})


def _check_type(upload: UploadFile, source: str, where: str) -> None:
    suffix = PurePosixPath(upload.name).suffix.lower()
    if suffix not in EXTENSIONS:
        raise ConfigError(
            f"`{upload.file_path}`: file search does not read {suffix or 'files without an extension'}",
            file=source,
            path=where,
            fix=f"Use one of {', '.join(sorted(EXTENSIONS))}",
        )
