"""Small helpers shared by the backend tests."""

from collections.abc import AsyncIterator, Callable
from typing import Any

from massgen.core.types import BackendEvent, Message, Request, TextChunk, ToolCall, ToolSpec
from massgen.testing import Reply, Scripted

# A finished tool turn, for the tests of what each wire sends.
ADD = ToolSpec("add", "Add numbers.", {"type": "object", "properties": {}})
ADD_TURN = (
    Message("system", "Be brief."),
    Message("user", "Add 2 and 3."),
    Message("assistant", "", tool_calls=(ToolCall("c1", "add", '{"a": 2, "b": 3}'),)),
    Message("tool", "5", tool_call_id="c1"),
)


def ask(text: str = "What is 6 x 7?", **kwargs) -> Request:
    return Request(messages=(Message("user", text),), **kwargs)


async def collect(stream: AsyncIterator[BackendEvent]) -> list[BackendEvent]:
    return [event async for event in stream]


def text_of(events: list[BackendEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextChunk))


async def first_request(
    fake_type: Callable[[Scripted], Any],
    make: Callable[..., Any],
    request: Request,
    reply: str = "ok",
    **changes: Any,
) -> dict[str, Any]:
    """The body that `make(fake, **changes)` sent a `fake_type` fake for `request`."""
    with fake_type(Scripted([Reply(text=reply)])) as fake:
        await collect(make(fake, **changes).stream(request))
        return fake.requests[0]
