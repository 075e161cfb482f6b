"""The error tree. Raise these; never yield error strings.

MassgenError
├── ConfigError            the user can fix it: says where (file, key path) and how
└── BackendError           a provider call failed; `retryable` says whether trying again can help
    ├── AuthFailed         bad or missing credentials (never retried)
    ├── RateLimited        429; carries the provider's Retry-After when it sent one
    ├── ProviderUnavailable  5xx, connect or read timeout, a stream that stopped mid-answer
    ├── MalformedResponse  the provider sent something we could not parse
    ├── ContextTooLong     the prompt does not fit the model (never retried)
    └── BadRequest         the provider rejected the request for another reason

A run past its deadline is not an error: it ends with the best answer so far
(`Status.TIMEOUT`).
"""

from __future__ import annotations


class MassgenError(Exception):
    """Base of every error massgen raises on purpose."""


class ConfigError(MassgenError):
    """A configuration the user can fix.

    Rendered as one line: `FILE: KEY.PATH: what is wrong. fix`.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        path: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.path = path
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        where = ": ".join(part for part in (self.file, self.path) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.fix:
            text = f"{text.rstrip('.')}. {self.fix}"
        return one_line(text)


def one_line(text: str) -> str:
    """`text` with control characters shown as escapes (`\\n`, `\\x00`), so that a key or
    value from a config file cannot break the one-line error or write to the terminal."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class BackendError(MassgenError):
    """A provider call failed. `message` is the provider's own words where it gave any."""

    retryable: bool = False

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        self.message = message
        self.provider = provider
        self.status = status
        super().__init__(message)

    def __str__(self) -> str:
        prefix = f"{self.provider}: " if self.provider else ""
        code = f" (HTTP {self.status})" if self.status else ""
        return f"{prefix}{type(self).__name__}{code}: {self.message}"


class AuthFailed(BackendError):
    pass


class RateLimited(BackendError):
    retryable = True

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = 429,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status=status)
        self.retry_after = retry_after


class ProviderUnavailable(BackendError):
    retryable = True


class MalformedResponse(BackendError):
    retryable = True


class ContextTooLong(BackendError):
    pass


class BadRequest(BackendError):
    pass


def for_status(
    status: int,
    message: str,
    provider: str,
    *,
    retry_after: float | None = None,
    too_long: bool = False,
) -> BackendError:
    """A provider's HTTP error status as one of the errors above: a key refused, a rate
    limit (`retry_after` seconds), a request over the context (`too_long`, which the
    provider's wording tells), a failure worth another try, or a request to correct."""
    if status in (401, 403):
        return AuthFailed(message, provider=provider, status=status)
    if status == 429:
        return RateLimited(message, provider=provider, status=status, retry_after=retry_after)
    if too_long:
        return ContextTooLong(message, provider=provider, status=status)
    if status in (408, 409, 425) or status >= 500:
        return ProviderUnavailable(message, provider=provider, status=status)
    return BadRequest(message, provider=provider, status=status)


def unreachable(error: Exception, message: str, provider: str) -> ProviderUnavailable:
    """An SDK's connection failure, with what it says caused it (refused, reset, DNS)."""
    cause = f" ({error.__cause__})" if error.__cause__ else ""
    return ProviderUnavailable(f"{message}{cause}", provider=provider)
