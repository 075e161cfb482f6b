"""A scripted in-process backend for protocol tests: each model call takes the next step.

A step is a list of backend events, an exception to raise, a callable that builds the
step from the request (to vote for an answer whose label is only known at run time), or
a `Gate` that waits for an asyncio.Event first. No sleeps, no network.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from massgen.core.types import (
    BackendEvent,
    Finish,
    Request,
    TextChunk,
    ToolCall,
    Usage,
)

_ids = itertools.count(1)
Step = Any


def answer(content: str) -> list[BackendEvent]:
    return _call("new_answer", {"content": content})


def vote(label: str, reason: str = "best") -> list[BackendEvent]:
    return _call("vote", {"agent_id": label, "reason": reason})


def text(content: str) -> list[BackendEvent]:
    return [TextChunk(content), Usage(20, 10), Finish()]


def _call(name: str, arguments: dict) -> list[BackendEvent]:
    call = ToolCall(f"call_{next(_ids)}", name, json.dumps(arguments))
    return [TextChunk("thinking it over. "), call, Usage(100, 20), Finish("tool_calls")]


def label_of(request: Request, fragment: str) -> str:
    """The label under which an answer containing `fragment` appears in the request."""
    user = request.messages[1].content
    for match in re.finditer(r"<(agent\d+\.\d+)>\n(.*?)\n<end of \1>", user, re.S):
        if fragment in match.group(2):
            return match.group(1)
    raise NotInView(f"no answer containing {fragment!r} in view:\n{user}")


def vote_for(fragment: str, reason: str = "best") -> Callable[[Request], list[BackendEvent]]:
    return lambda request: vote(label_of(request, fragment), reason)


class NotInView(AssertionError):
    pass


@dataclass
class Gate:
    """Wait for `event`, then take `then`. With `settle`, first let whatever set the event
    finish its work (e.g. restart this very run), as network latency would."""

    event: asyncio.Event
    then: Step
    settle: bool = True


class ScriptedBackend:
    def __init__(self, *steps: Step, name: str = "scripted") -> None:
        self.name = name
        self.steps = list(steps)
        self.requests: list[Request] = []
        self.closed = False

    async def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        # Let the other agents take their turn first, as a real network call would; a call
        # cancelled before its step is taken consumes no step.
        await asyncio.sleep(0)
        self.requests.append(request)
        if not self.steps:
            raise AssertionError(
                f"{self.name}: no scripted step left for call {len(self.requests)}"
            )
        while isinstance(self.steps[0], Gate):
            gate = self.steps[0]
            await gate.event.wait()
            self.steps[0] = gate.then
            for _ in range(5 if gate.settle else 0):
                await asyncio.sleep(0)
        step = await self._build(self.steps[0], request)
        self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        for item in step:
            yield item

    async def _build(self, step: Step, request: Request) -> Step:
        """Callable steps may wait for answers not yet in view: in the scenarios that use
        them the orchestrator restarts the run with a fresh view before long."""
        if not callable(step):
            return step
        for _ in range(50):
            try:
                return step(request)
            except NotInView:
                await asyncio.sleep(0)
        return step(request)

    async def aclose(self) -> None:
        self.closed = True

    def tool_names(self, call: int) -> list[str]:
        return [tool.name for tool in self.requests[call].tools]


class Cues:
    """An event sink that records events and sets cues when counts are reached, so a
    scripted step can wait for "3 answers published" instead of racing for it."""

    def __init__(self) -> None:
        self.events: list = []
        self._cues: list[tuple[type, int, asyncio.Event]] = []

    def __call__(self, event) -> None:
        self.events.append(event)
        for kind, count, cue in self._cues:
            if sum(isinstance(e, kind) for e in self.events) >= count:
                cue.set()

    def after(self, kind: type, count: int) -> asyncio.Event:
        cue = asyncio.Event()
        self._cues.append((kind, count, cue))
        return cue

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]
