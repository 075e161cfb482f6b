"""Fixtures: backends pointed at a FakeProvider, and a sleep that only records."""

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from massgen.backends.chat_completions import ChatCompletionsBackend
from massgen.backends.common import Endpoint, Retries
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
    """`backends(cls, provider=..., model=..., api_key=...)` gives `make(fake, *,
    max_retries=0, **changes)`, which builds a `cls` on an `Endpoint` pointed at the fake's
    `base_url`, with no retries unless asked, the recording sleep and fixed jitter.
    `changes` replace endpoint fields; other keywords go to `cls`. Every backend built is
    closed at teardown."""
    made: list[Any] = []

    def factory(cls: type, **defaults: Any) -> MakeBackend:
        def make(fake: Any, *, max_retries: int = 0, **kwargs: Any) -> Any:
            fields = {"base_url": fake.base_url, **defaults}
            for name in Endpoint.__dataclass_fields__:
                if name in kwargs:
                    fields[name] = kwargs.pop(name)
            retries = Retries(RetryPolicy(max_retries=max_retries), sleep=sleep, rand=lambda: 0.5)
            backend = cls(Endpoint(**fields, retries=retries), **kwargs)
            made.append(backend)
            return backend

        return make

    yield factory
    for backend in made:
        await backend.aclose()


@pytest.fixture
def make_backend(backends: Callable[..., MakeBackend]) -> MakeBackend:
    """Build ChatCompletionsBackends against a FakeProvider."""
    return backends(
        ChatCompletionsBackend, provider="chatcompletion", model="fake-model", api_key="sk-test-key"
    )
