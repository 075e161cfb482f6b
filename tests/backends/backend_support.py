"""Small helpers shared by the backend tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.core import events as ev
from massgen.core.types import BackendEvent, Message, Request, TextChunk, ToolCall, ToolSpec
from massgen.testing import FakeProvider, Reply, Scripted, cooperative_agent

if TYPE_CHECKING:
    from massgen.api import RunResult

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


def host_backend(wire: str, cwd: str, base_url: str, api_key: str, **more: Any) -> dict[str, Any]:
    """An agent host's `backend:` (claude_code, codex, gemini_cli) on a loopback fake."""
    return {"type": wire, "cwd": cwd, "base_url": base_url, "api_key": api_key, **more}


async def beside_api_member(
    agent: str, backend: dict[str, Any], question: str, log_dir: Path | None = None
) -> tuple[RunResult, list[ev.AnyEvent]]:
    """A team of `agent` (the backend under test) and an API member that answers and votes
    on the loopback fake: the run's result and its events (logs only in `log_dir`)."""
    with FakeProvider(cooperative_agent) as other:
        member = {"type": "chatcompletion", "base_url": other.base_url, "model": "m"}
        agents = [{"id": agent, "backend": backend}, {"id": "api", "backend": member}]
        return await team_run({"agents": agents}, question, log_dir)


async def team_run(
    config: dict[str, Any], question: str, log_dir: Path | None = None
) -> tuple[RunResult, list[ev.AnyEvent]]:
    """`config` run on `question`: its result and its events (logs only in `log_dir`)."""
    from massgen import api

    events: list[ev.AnyEvent] = []
    run = api.TeamRun(
        api.load(config),
        question,
        sinks=[events.append],
        logs=log_dir is not None,
        log_dir=log_dir,
    )
    return await run.execute(), events
