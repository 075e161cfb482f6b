"""What the SDK-backed wire modules share: the endpoint they are built from, a base class
with retries, error mapping and key scrubbing, the parameter renaming, usage estimates.

SDK-free, so importing it loads no provider library.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from massgen.backends.retry import OnRetry, RetryPolicy, Sleep, retrying
from massgen.core.errors import BackendError
from massgen.core.types import BackendEvent, GenerationParams, Request, Usage

if TYPE_CHECKING:
    from massgen.backends.profiles import Profile
    from massgen.config.schema import BackendConfig

T = TypeVar("T")
CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Retries:
    """A backend's retry policy and hooks (injectable for tests)."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Sleep = asyncio.sleep
    rand: Callable[[], float] = random.random
    on_retry: OnRetry | None = None

    def run(self, attempt: Callable[[], AsyncGenerator[T, None]]) -> AsyncIterator[T]:
        """`retry.retrying(attempt, ...)` with this policy and these hooks."""
        return retrying(
            attempt, self.policy, sleep=self.sleep, rand=self.rand, on_retry=self.on_retry
        )


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where one model is served and how to reach it: what every SDK backend is built from."""

    provider: str  # the profile's name, e.g. "groq"
    model: str
    api_key: str
    base_url: str | None = None  # None: the SDK's own default
    timeout: float = 300.0  # seconds without a byte before a call fails
    retries: Retries = field(default_factory=Retries)


def endpoint_for(cfg: BackendConfig, profile: Profile, api_key: str) -> Endpoint:
    """The endpoint a config names, with the profile's defaults filled in."""
    return Endpoint(
        provider=profile.name,
        model=cfg.model or profile.default_model or "",
        api_key=api_key,
        base_url=cfg.base_url or profile.base_url,
        timeout=cfg.request_timeout_seconds,
        retries=Retries(RetryPolicy(max_retries=cfg.max_retries)),
    )


class SdkBackend:
    """What every SDK-backed backend shares: a name ("provider:model"), bounded retries,
    and one place where SDK exceptions become our errors with the key scrubbed out.

    A subclass builds its client from the `Endpoint`, yields one attempt's events from
    `_events`, and says in `map_error` which of its SDK's exceptions mean what.
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.name = f"{endpoint.provider}:{endpoint.model}"
        self.model = endpoint.model
        self._endpoint = endpoint
        self._secret = endpoint.api_key

    def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        return self._endpoint.retries.run(lambda: self._attempt(request))

    async def _attempt(self, request: Request) -> AsyncGenerator[BackendEvent, None]:
        try:
            async for event in self._events(request):
                yield event
        except BackendError as error:
            raise scrub(error, self._secret) from None
        except Exception as exc:  # only what `map_error` recognises is ours; the rest re-raises
            mapped = self.map_error(exc)
            if mapped is None:
                raise
            raise scrub(mapped, self._secret) from None

    def _events(self, request: Request) -> AsyncIterator[BackendEvent]:
        raise NotImplementedError

    def map_error(self, exc: Exception) -> BackendError | None:
        """`exc` as one of our errors, or None when it is not the SDK's or the transport's."""
        raise NotImplementedError


def wire_params(params: GenerationParams, names: Mapping[str, str]) -> dict[str, Any]:
    """The parameters `params` sets, each under the wire's name for it (`names`: ours ->
    the wire's); a tuple (`stop`) goes as a list."""
    out: dict[str, Any] = {}
    for ours, theirs in names.items():
        value = getattr(params, ours)
        if value is not None:
            out[theirs] = list(value) if isinstance(value, tuple) else value
    return out


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
