"""What the SDK-backed wire modules share: the endpoint they are built from, a base class
with retries, error mapping and key scrubbing, the parameter renaming, the state of one
streamed answer, usage estimates.

SDK-free, so importing it loads no provider library.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from massgen.backends import tls
from massgen.backends.retry import OnRetry, RetryPolicy, Sleep, retrying
from massgen.core.errors import BackendError, MalformedResponse, ProviderUnavailable
from massgen.core.types import BackendEvent, Finish, GenerationParams, Request, ToolCall, Usage

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


class HttpSdkBackend(SdkBackend):
    """An `SdkBackend` over an HTTP SDK's async client (anthropic, openai): closing the
    backend closes the client, and a body that is not JSON is a malformed response.

    A subclass sets `_client` and says in `map_sdk_error` which of its SDK's (and its
    transport's) exceptions mean what.
    """

    _client: Any  # the SDK's async client: anything with `async close()`

    async def aclose(self) -> None:
        await self._client.close()

    def map_error(self, exc: Exception) -> BackendError | None:
        if isinstance(exc, json.JSONDecodeError):
            return MalformedResponse(f"unparseable event: {exc}", provider=self.name)
        return self.map_sdk_error(exc)

    def map_sdk_error(self, exc: Exception) -> BackendError | None:
        """`exc` as one of our errors, or None when it is not the SDK's or the transport's."""
        raise NotImplementedError

    @staticmethod
    async def _relay(
        stream: Any,
        feed: Callable[[Any], list[BackendEvent]],
        close: Callable[[], list[BackendEvent]],
    ) -> AsyncGenerator[BackendEvent, None]:
        """What `feed` makes of each item of `stream`, an SDK's open stream, then, once the
        stream has ended and been closed, what `close` says it came to."""
        async with stream:
            async for item in stream:
                for event in feed(item):
                    yield event
        for event in close():
            yield event


def client_options(endpoint: Endpoint, sdk: ModuleType) -> dict[str, Any]:
    """What an `anthropic` or `openai` async client (the two SDKs name them alike) is built
    with besides its URL: the key, no retries of its own (`Retries` does that), a timeout
    whose `read` bounds the gap between bytes, so a stalled stream fails in time, and the
    process's one TLS context.
    """
    return {
        "api_key": endpoint.api_key,
        "max_retries": 0,
        "timeout": sdk.Timeout(endpoint.timeout, connect=min(endpoint.timeout, 10.0)),
        "http_client": sdk.DefaultAsyncHttpxClient(verify=tls.context()),
    }


class StreamState:
    """What one streamed answer has said so far.

    A wire's subclass reads each chunk in `_feed`, setting `_finish` and `_usage` and
    counting `_output_chars` as it goes, and says what they come to in `_tool_calls`,
    `_finish_reason` and `_counted`. `close` does the rest the same way for every wire.
    """

    # What `_feed` raises on a chunk of the wrong shape: a malformed response, not a bug.
    shape_errors: tuple[type[Exception], ...] = (AttributeError, TypeError)
    unit = "chunk"  # what the stream is made of, for that error's message

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self._finish: str | None = None
        self._usage: Any = None  # the provider's latest count, in its own shape
        self._output_chars = 0

    def feed(self, chunk: Any) -> list[BackendEvent]:
        """The events one chunk carries as it arrives (text, reasoning)."""
        try:
            return self._feed(chunk)
        except self.shape_errors as exc:
            raise MalformedResponse(
                f"unexpected {self.unit} shape: {exc}", provider=self._provider
            ) from None

    def close(self, prompt_chars: int) -> list[BackendEvent]:
        """Tool calls, usage and finish, once the stream has ended; usage the provider did
        not report is estimated from `prompt_chars` and the output.

        Raises:
            ProviderUnavailable: the stream ended without a finish reason.
        """
        if self._finish is None:
            raise ProviderUnavailable("stream ended early", provider=self._provider)
        usage = None if self._usage is None else self._counted(self._usage)
        if usage is None:
            usage = estimated_usage(prompt_chars, self._output_chars)
        return [*self._tool_calls(), usage, Finish(self._finish_reason(self._finish))]

    def _feed(self, chunk: Any) -> list[BackendEvent]:
        raise NotImplementedError

    def _tool_calls(self) -> list[ToolCall]:
        raise NotImplementedError

    def _finish_reason(self, finish: str) -> str:
        """Our name for the provider's finish reason."""
        return finish

    def _counted(self, raw: Any) -> Usage | None:
        """The provider's count as our `Usage`; None: too little to go on, estimate."""
        raise NotImplementedError


def wire_params(params: GenerationParams, names: Mapping[str, str | None]) -> dict[str, Any]:
    """The parameters `params` sets, each under the wire's name for it (`names`: ours ->
    the wire's, a dotted name nested, None left to the caller); a tuple (`stop`) goes as a
    list."""
    out: dict[str, Any] = {}
    for ours, theirs in names.items():
        value = getattr(params, ours)
        if value is None or theirs is None:
            continue
        *outer, last = theirs.split(".")
        place = out
        for key in outer:
            place = place.setdefault(key, {})
        place[last] = list(value) if isinstance(value, tuple) else value
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
