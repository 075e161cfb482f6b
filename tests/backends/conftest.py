"""Fixtures: backends pointed at a FakeProvider, and a sleep that only records."""

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from massgen.backends.chat_completions import ChatCompletionsBackend
from massgen.backends.retry import RetryPolicy
from massgen.testing import FakeProvider

# Test modules here share small helpers in backend_support.py.
sys.path.insert(0, str(Path(__file__).parent))

MakeBackend = Callable[..., ChatCompletionsBackend]


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
async def make_backend(sleep: RecordingSleep) -> AsyncIterator[MakeBackend]:
    """Build backends against a FakeProvider; closed at teardown."""
    made: list[ChatCompletionsBackend] = []

    def make(fp: FakeProvider, *, max_retries: int = 0, **kwargs) -> ChatCompletionsBackend:
        kwargs.setdefault("model", "fake-model")
        kwargs.setdefault("api_key", "sk-test-key")
        kwargs.setdefault("rand", lambda: 0.5)
        backend = ChatCompletionsBackend(
            base_url=fp.base_url,
            retry=RetryPolicy(max_retries=max_retries),
            sleep=sleep,
            **kwargs,
        )
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()
