"""What the subagent tests share: a one-agent team with subagents on, reading the fake
provider's recorded requests (a child's, the tool results), and cancelling a parent run
once its child is at work."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from massgen.api import TeamRun
from massgen.config import config_from_dict
from massgen.runs.subagents import SUBAGENT_NOTE
from massgen.testing import Fault, Reply

Policy = Callable[[dict], Reply]


def team(base_url: str, **coordination) -> dict:
    backend = {"type": "chatcompletion", "base_url": base_url, "api_key": "k", "model": "m"}
    return {
        "agents": [{"id": "lead", "backend": {**backend, "cwd": "lead_ws"}}],
        "orchestrator": {"coordination": {"enable_subagents": True, **coordination}},
    }


def predecessor_coordination(**keys: object):
    """The typed `orchestrator.coordination` of a predecessor config with subagents on
    and these `coordination` keys."""
    from massgen.config.predecessor import translate

    raw = {
        "agents": [{"id": "a", "backend": {"type": "openai", "model": "gpt-4o"}}],
        "orchestrator": {"coordination": {"enable_subagents": True, **keys}},
    }
    data, _ = translate(raw, "x.yaml")
    return config_from_dict(data).orchestrator.coordination


def offered(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def is_child(request: dict) -> bool:
    return SUBAGENT_NOTE in request["messages"][0]["content"]


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def stalling_children(asked: threading.Event, parent: Policy) -> Policy:
    """Children that set `asked` and then stall for a minute; the parent is `parent`."""

    def policy(request: dict) -> Reply:
        if is_child(request):
            asked.set()
            return Reply(fault=Fault(stall_seconds=60))
        return parent(request)

    return policy


async def cancel_once_asked(run: TeamRun, asked: threading.Event, settle: float = 0.0) -> float:
    """Runs `run`, cancels it (what Ctrl-C does) `settle` seconds after a child was
    asked, and returns how many seconds the cancellation took."""
    task = asyncio.create_task(run.execute())
    while not asked.is_set():
        await asyncio.sleep(0.02)
    await asyncio.sleep(settle)
    started = time.monotonic()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return time.monotonic() - started
    raise AssertionError("the run ended without raising CancelledError")
