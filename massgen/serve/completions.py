"""Chat Completions over a live run: one answer, or a stream of chunks.

A client that goes away cancels its run: the plain request watches for the disconnect,
and sse-starlette cancels the stream's generator, which cancels the run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from massgen.api import RunResult
from massgen.core import events as ev
from massgen.serve import wire
from massgen.serve.runs import LiveRun


async def answer_once(
    request: Request, run: LiveRun, req: wire.ChatRequest, completion_id: str
) -> Response:
    """Wait for the answer; a client that hangs up first cancels the run."""
    gone = asyncio.create_task(_disconnected(request))
    waiting = asyncio.create_task(run.wait())
    try:
        await asyncio.wait({gone, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if not waiting.done():
        waiting.cancel()
        await run.cancel()
        return Response(status_code=499)  # nobody is listening
    result = run.outcome()
    if isinstance(result, str) or not result.answer:
        message = result if isinstance(result, str) else _no_answer(result)
        body = wire.error_body(message, "server_error", "team_failed")
        return JSONResponse(body, status_code=500, headers=_NO_RETRY)
    lines = (wire.progress_line(e) for e in run.events)
    reasoning = "".join(line for line in lines if line)
    body = wire.completion(completion_id, req.model, result.answer, reasoning, result.total_usage)
    return JSONResponse(body)


# The openai SDK retries 5xx; a team that failed would only fail (and spend) again.
_NO_RETRY = {"x-should-retry": "false"}


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _no_answer(result: RunResult) -> str:
    failed = "; ".join(f"{agent}: {error}" for agent, error in result.failed_agents.items())
    return f"the team gave no answer ({result.status}: {result.reason})" + (
        f"; {failed}" if failed else ""
    )


async def answer_stream(
    run: LiveRun, req: wire.ChatRequest, completion_id: str
) -> AsyncIterator[dict[str, str]]:
    """Progress as reasoning_content, the answer as content, usage, [DONE]. If the client
    goes away, sse-starlette cancels this generator and the run is cancelled with it."""

    def frame(delta: dict[str, Any], finish: str | None = None) -> dict[str, str]:
        return {"data": json.dumps(wire.chunk(completion_id, req.model, delta, finish))}

    try:
        yield frame({"role": "assistant", "content": ""})
        answered = False
        held = False  # the presented text may be replaced by a restart: send the final one
        async for _, event in run.follow():
            if isinstance(event, ev.PresentationStarted):
                held = event.may_restart
            if isinstance(event, ev.FinalTextDelta) and event.text and not held:
                answered = True
                yield frame({"content": event.text})
            elif isinstance(event, ev.RunFinished) and not answered and event.answer:
                answered = True
                yield frame({"content": event.answer})
            elif (line := wire.progress_line(event)) is not None:
                yield frame({"reasoning_content": line})
        await run.wait()  # `follow` has ended: so has the run
        result = run.outcome()
        if isinstance(result, str) or not answered:
            message = result if isinstance(result, str) else _no_answer(result)
            yield {"data": json.dumps(wire.error_body(message, "server_error", "team_failed"))}
            return
        yield frame({}, "stop")
        if req.include_usage:
            usage = wire.usage_chunk(completion_id, req.model, result.total_usage)
            yield {"data": json.dumps(usage)}
        yield {"data": "[DONE]"}
    finally:
        if run.task is not None and not run.task.done():
            run.task.cancel()  # no await: this scope may itself be cancelled
