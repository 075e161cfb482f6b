"""What the SDK-backed wire modules share: a base class with retry wiring, key scrubbing,
usage estimates.

SDK-free, so importing it loads no provider library.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TypeVar

from massgen.backends.retry import OnRetry, RetryPolicy, Sleep, retrying
from massgen.core.errors import BackendError
from massgen.core.types import BackendEvent, GenerationParams, Request, Usage

T = TypeVar("T")
CHARS_PER_TOKEN = 4


class Retries:
    """A backend's retry policy and hooks (injectable for tests), bound once."""

    def __init__(
        self,
        policy: RetryPolicy | None,
        *,
        sleep: Sleep,
        rand: Callable[[], float] | None,
        on_retry: OnRetry | None,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self._hooks: dict[str, Any] = {"sleep": sleep, "on_retry": on_retry}
        if rand is not None:
            self._hooks["rand"] = rand

    def run(self, attempt: Callable[[], AsyncGenerator[T, None]]) -> AsyncIterator[T]:
        """`retry.retrying(attempt, ...)` with this policy and these hooks."""
        return retrying(attempt, self.policy, **self._hooks)


class SdkBackend:
    """What every SDK-backed backend holds: a name ("provider:model"), its generation
    parameters, bounded retries, and the key that must never show in an error. A subclass
    builds its client and yields one attempt's events from `_attempt`; `stream` retries."""

    def __init__(
        self,
        provider: str,
        model: str,
        api_key: str,
        params: GenerationParams | None,
        retries: Retries,
    ) -> None:
        self.name = f"{provider}:{model}"
        self.model = model
        self._params = params or GenerationParams()
        self._retries = retries
        self._secret = api_key

    def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        return self._retries.run(lambda: self._attempt(request))

    def _attempt(self, request: Request) -> AsyncGenerator[BackendEvent, None]:
        raise NotImplementedError


def scrub(error: BackendError, secret: str) -> BackendError:
    """`error` with the API key masked in its message."""
    # Some providers echo the key back in their error text.
    if secret and len(secret) > 4 and secret in error.message:
        error.message = error.message.replace(secret, "***")
        error.args = (error.message,)
    return error


def estimated_usage(prompt_chars: int, output_chars: int) -> Usage:
    """Usage guessed from characters, for a provider that reported none."""
    return Usage(
        input_tokens=estimate_tokens(prompt_chars),
        output_tokens=estimate_tokens(output_chars),
        estimated=True,
    )


def estimate_tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def request_chars(request: Request) -> int:
    """Characters of a request's messages, tool-call arguments and tool specs."""
    chars = sum(
        len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in request.messages
    )
    return chars + sum(len(json.dumps(t.parameters)) + len(t.description) for t in request.tools)
