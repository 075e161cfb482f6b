"""The whole seam between coordination and a provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from massgen.core.effects import Effect
from massgen.core.events import AnyEvent
from massgen.core.toolbox import Toolbox
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


@dataclass(frozen=True, slots=True)
class Binding:
    """What a member's equipment gives a backend that runs a whole agent (`AgentHost`):
    who it is, where it works, the permission engine's verdict on each of its own tool
    calls (None: allowed, else the refusal the agent reads), the member's guarded
    toolbox (offered to the agent too) and the run's event sink."""

    agent: str
    workspace: Path
    decide: Callable[[str, str, Mapping[str, Any]], Awaitable[str | None]]
    toolbox: Toolbox
    emit: Callable[[AnyEvent], None]
    context_paths: tuple[Path, ...] = ()


@runtime_checkable
class AgentHost(Protocol):
    """A backend that runs a whole agent turn with its own tools and tool loop (Claude
    Code): each `stream` is one turn, reporting only the workflow action it took as a
    `ToolCall`. Its tools' effects are told by `effects` so the run's engine decides each
    call; it runs nothing before `bind`."""

    def effects(self, tool: str, arguments: Mapping[str, Any], cwd: Path) -> tuple[Effect, ...]: ...

    def bind(self, binding: Binding) -> None: ...
