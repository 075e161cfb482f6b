"""Fixtures: backends pointed at a FakeProvider, and a sleep that only records."""

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from massgen.backends.chat_completions import ChatCompletionsBackend
from massgen.backends.retry import RetryPolicy

# Test modules here share small helpers in backend_support.py.
sys.path.insert(0, str(Path(__file__).parent))

MakeBackend = Callable[..., Any]


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
async def backends(sleep: RecordingSleep) -> AsyncIterator[Callable[..., MakeBackend]]:
    """`backends(cls, **defaults)` gives `make(fake, *, max_retries=0, **kwargs)`, which
    builds a `cls` pointed at the fake's `base_url`, with no retries unless asked, the
    recording sleep and fixed jitter. Every backend built is closed at teardown."""
    made: list[Any] = []

    def factory(cls: type, **defaults: Any) -> MakeBackend:
        def make(fake: Any, *, max_retries: int = 0, **kwargs: Any) -> Any:
            kwargs = {"base_url": fake.base_url, "rand": lambda: 0.5, **defaults, **kwargs}
            backend = cls(retry=RetryPolicy(max_retries=max_retries), sleep=sleep, **kwargs)
            made.append(backend)
            return backend

        return make

    yield factory
    for backend in made:
        await backend.aclose()


@pytest.fixture
def make_backend(backends: Callable[..., MakeBackend]) -> MakeBackend:
    """Build ChatCompletionsBackends against a FakeProvider."""
    return backends(ChatCompletionsBackend, model="fake-model", api_key="sk-test-key")
