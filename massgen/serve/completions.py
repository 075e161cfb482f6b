"""Chat Completions over a live run: one answer, or a stream of chunks.

A client that goes away cancels its run: the plain request watches for the disconnect,
and sse-starlette cancels the stream's generator, which cancels the run. `follow` is the
stream both wires render (`serve/responses.py` too): progress lines, the final text as
the client asked for it (`serve/final.py`), then how it ended.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from massgen.api import RunResult
from massgen.core import events as ev
from massgen.core.aio import unless
from massgen.core.types import Usage
from massgen.serve import final, wire
from massgen.serve.options import Ask
from massgen.serve.runs import LiveRun

# The openai SDK retries 5xx; a team that failed would only fail (and spend) again.
NO_RETRY = {"x-should-retry": "false"}


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    finish: str  # "stop" or "length"
    usage: Usage  # the team's, and any repair calls'


class Failed(Exception):
    """The run gave no usable answer; `status` and `code` go into the error."""

    def __init__(self, message: str, status: int = 500, code: str = "team_failed") -> None:
        super().__init__(message)
        self.message, self.status, self.code = message, status, code

    def body(self) -> dict[str, Any]:
        kind = "server_error" if self.status >= 500 else "invalid_request_error"
        return wire.error_body(self.message, kind, self.code)

    def response(self) -> Response:
        return JSONResponse(self.body(), status_code=self.status, headers=NO_RETRY)


async def wait_answer(request: Request, run: LiveRun, ask: Ask) -> Answer | Response:
    """The answer once the run ends, else the response to send instead: a 499 if the
    client hung up first (the run is cancelled), or the run's failure (`Failed`)."""
    waiting = await unless(run.wait(), _disconnected(request))
    if waiting.cancelled():
        await run.cancel()
        return Response(status_code=499)  # nobody is listening
    try:
        return await delivered(run, ask)
    except Failed as failed:
        return failed.response()


async def delivered(run: LiveRun, ask: Ask) -> Answer:
    """An ended run's answer as `ask` wants it. Raises Failed."""
    result = run.outcome()
    if isinstance(result, str) or not result.answer:
        raise Failed(result if isinstance(result, str) else _no_answer(result))
    answer, usage = result.answer, result.total_usage
    if ask.output is not None:
        try:
            conformed = await final.conform(answer, ask.output, run.turn.loaded, result.winner)
        except final.NotConforming as error:
            message = (
                f"the team's answer is not valid JSON for `{ask.output.param}` "
                f"(after {final.MAX_REPAIRS} repairs): {error}"
            )
            raise Failed(message, 400, "answer_not_json") from None
        answer, usage = conformed.text, usage + conformed.usage
    text, finish = final.whole(answer, ask)
    return Answer(text, finish, usage)


def tool_of(ask: Ask) -> str | None:
    """The client's tool whose call carries the answer (`options.forced_tool`), if any."""
    return ask.output.name if ask.output is not None and ask.output.tool else None


def reasoning_of(run: LiveRun) -> str:
    """The team's work so far as progress lines: what a client shows as reasoning."""
    lines = (wire.progress_line(e) for e in run.events)
    return "".join(line for line in lines if line)


async def answer_once(
    request: Request, run: LiveRun, req: wire.ChatRequest, completion_id: str
) -> Response:
    answer = await wait_answer(request, run, req.ask)
    if isinstance(answer, Response):
        return answer
    body = wire.completion(
        completion_id,
        req.model,
        answer.text,
        reasoning_of(run),
        answer.usage,
        answer.finish,
        tool=tool_of(req.ask),
    )
    return JSONResponse(body)


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _no_answer(result: RunResult) -> str:
    failed = "; ".join(f"{agent}: {error}" for agent, error in result.failed_agents.items())
    return f"the team gave no answer ({result.status}: {result.reason})" + (
        f"; {failed}" if failed else ""
    )


# --- following a run ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Progress:
    line: str


@dataclass(frozen=True, slots=True)
class Text:
    delta: str


Followed = Progress | Text | Answer | Failed  # Answer or Failed: the last item


async def follow(run: LiveRun, ask: Ask) -> AsyncIterator[Followed]:
    """The run as it goes: progress lines and the final text (as `ask` cuts it; held to
    the end when it must be JSON), then the whole `Answer`, or `Failed`. If the client
    goes away, sse-starlette cancels the generator and the run is cancelled with it."""
    try:
        cut = final.Cut(ask)
        answered, sent = False, ""
        held = ask.output is not None  # JSON is checked whole, then sent
        restartable = False  # the presented text may be replaced by a restart: send the final one
        async for _, event in run.follow():
            if isinstance(event, ev.PresentationStarted):
                restartable = event.may_restart
            if isinstance(event, ev.FinalTextDelta) and event.text and not (held or restartable):
                answered = True
                if text := cut.feed(event.text):
                    sent += text
                    yield Text(text)
            elif (line := wire.progress_line(event)) is not None:
                yield Progress(line)
        await run.wait()  # `follow` has ended: so has the run
        try:
            answer = await delivered(run, ask)
        except Failed as failed:
            yield failed
            return
        if not answered:
            yield Text(answer.text)
            yield answer
            return
        if rest := cut.end():
            sent += rest
            yield Text(rest)
        yield Answer(sent, cut.reason or "stop", answer.usage)
    finally:
        if run.task is not None and not run.task.done():
            run.task.cancel()  # no await: this scope may itself be cancelled


async def answer_stream(
    run: LiveRun, req: wire.ChatRequest, completion_id: str
) -> AsyncIterator[dict[str, str]]:
    """Progress as reasoning_content, the answer as content, usage, [DONE]; a failure is
    an error object, then [DONE] too."""

    def frame(delta: dict[str, Any], finish: str | None = None) -> dict[str, str]:
        return {"data": json.dumps(wire.chunk(completion_id, req.model, delta, finish))}

    tool = tool_of(req.ask)
    yield frame({"role": "assistant", "content": ""})
    async for item in follow(run, req.ask):
        if isinstance(item, Progress):
            yield frame({"reasoning_content": item.line})
        elif isinstance(item, Text) and tool is not None:  # held: the whole JSON at once
            yield frame({"tool_calls": [wire.tool_call(tool, item.delta, index=0)]})
        elif isinstance(item, Text):
            yield frame({"content": item.delta})
        elif isinstance(item, Failed):
            yield {"data": json.dumps(item.body())}
        else:
            finish = item.finish or "stop"
            yield frame({}, "tool_calls" if tool is not None and finish == "stop" else finish)
            if req.include_usage:
                usage = wire.usage_chunk(completion_id, req.model, item.usage)
                yield {"data": json.dumps(usage)}
    yield {"data": "[DONE]"}
