"""Small helpers shared by the backend tests."""

from collections.abc import AsyncIterator

from massgen.core.types import BackendEvent, Message, Request, TextChunk


def ask(text: str = "What is 6 x 7?", **kwargs) -> Request:
    return Request(messages=(Message("user", text),), **kwargs)


async def collect(stream: AsyncIterator[BackendEvent]) -> list[BackendEvent]:
    return [event async for event in stream]


def text_of(events: list[BackendEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextChunk))
