"""The whole seam between coordination and a provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from massgen.core.types import BackendEvent, Request

if TYPE_CHECKING:
    from massgen.backends.file_search import FileStore, Limits, Upload


@runtime_checkable
class Backend(Protocol):
    """One model behind one wire format.

    `stream` yields text and reasoning as it arrives, then any tool calls, usage, and a
    `Finish`. Failures are raised as `massgen.core.errors.BackendError` subclasses, after
    the backend's own bounded retries.
    """

    name: str  # a short description for messages, e.g. "chatcompletion:gpt-4o-mini"

    def stream(self, request: Request) -> AsyncIterator[BackendEvent]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class FileSearchHost(Protocol):
    """A backend whose provider searches files uploaded to it (`upload_files`): the
    Responses backends. `registry.check` lets `upload_files` reach no other."""

    async def open_file_store(
        self, uploads: Sequence[Upload], *, name: str, limits: Limits
    ) -> FileStore: ...

    async def close_file_store(self, store: FileStore, limits: Limits) -> list[str]: ...
