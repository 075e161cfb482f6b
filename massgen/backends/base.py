"""The whole seam between coordination and a provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from massgen.core.types import BackendEvent, Request


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
