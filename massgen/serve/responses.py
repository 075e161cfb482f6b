"""The Responses wire (`POST /v1/responses`): what the openai SDK's `responses.create` /
`responses.stream`, openai-agents and other Responses clients send and read.

`input` is a string or a list of messages (`{"role", "content"}`, typed `message` items;
`reasoning` items a client hands back are skipped); `instructions` and system/developer
messages are the user's instructions; a response is stored unless `store` is false
(`serve/stored.py`: `GET /v1/responses/{id}`), and `previous_response_id` continues a
stored one; `text.format`, `max_output_tokens`, `temperature` and `top_p` are honoured
as in Chat Completions. A stream sends the team's progress as a reasoning item's summary
text, then one message item, with the event types OpenAI sends; a failure is an `error`
event, then `[DONE]`.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from massgen.coordination.prompts import Turn
from massgen.core.types import Attachment, Usage
from massgen.serve import options
from massgen.serve.completions import Answer, Failed, Followed, Progress, Text, follow
from massgen.serve.options import Ask, RequestError
from massgen.serve.runs import LiveRun
from massgen.serve.stored import MAX_STORED, Responses
from massgen.serve.wire import INSTRUCTION_ROLES, MAX_MESSAGES, Said, conversation, model_of
from massgen.serve.wire import message_content as content_of

Json = dict[str, Any]
Frame = dict[str, str]  # one server-sent event
# A forced tool's output is the client's receipt of an answer: nothing for the team.
SKIPPED_ITEMS = ("reasoning", "item_reference", "function_call_output")


@dataclass(frozen=True, slots=True)
class ResponsesRequest:
    model: str
    question: str
    history: tuple[Turn, ...]
    stream: bool
    ask: Ask
    instructions: str | None
    previous: str | None
    store: bool = True  # kept for GET /v1/responses/{id} and `previous_response_id`
    echo: Json = field(default_factory=dict)  # request fields the response repeats


def parse(body: Any, stored: Responses) -> ResponsesRequest:
    """Raises RequestError for anything but a usable Responses request."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = model_of(body)
    said = _input(body.get("input"))
    given = body.get("instructions")
    if given is not None and not isinstance(given, str):
        raise RequestError("`instructions` must be text", param="instructions")
    store = body.get("store", True)
    if not isinstance(store, bool):
        raise RequestError("`store` must be true or false", param="store")
    previous = body.get("previous_response_id")
    earlier = _earlier(previous, stored) if previous is not None else ()
    question, history, images = conversation(said)
    ask = _ask(body, [given or ""] + [t for r, t, _ in said if r in INSTRUCTION_ROLES], images)
    echo = _echo(body, given, previous, store, ask)
    stream = bool(body.get("stream"))
    return ResponsesRequest(
        model, question, earlier + history, stream, ask, given, previous, store, echo
    )


def _ask(body: Json, instructions: list[str], images: tuple[Attachment, ...]) -> Ask:
    """What the request asks beyond the question. Raises RequestError."""
    return Ask(
        instructions=options.instructions(instructions),
        sampling=options.sampling(body, ("temperature", "top_p")),
        max_tokens=options.max_tokens(body, "max_output_tokens"),
        output=options.output(
            options.responses_format(body), options.forced_tool(body, nested=False)
        ),
        images=images,
    )


def _echo(body: Json, given: str | None, previous: Any, store: bool, ask: Ask) -> Json:
    """The request's fields as the response repeats them."""
    return {
        "instructions": given,
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "max_output_tokens": body.get("max_output_tokens"),
        "text": body.get("text") or {"format": {"type": "text"}},
        "metadata": body.get("metadata") or {},
        "previous_response_id": previous,
        "store": store,
        **(
            {"tools": body["tools"], "tool_choice": body.get("tool_choice")}
            if ask.output and ask.output.tool
            else {}
        ),
    }


def _earlier(previous: Any, stored: Responses) -> tuple[Turn, ...]:
    """The conversation `previous_response_id` continues. Raises RequestError."""
    kept = stored.get(previous) if isinstance(previous, str) else None
    if kept is None:
        raise RequestError(
            f"previous_response_id {previous!r} is unknown here: this server keeps the "
            f"{MAX_STORED} most recently used responses made with `store` true (the "
            "default), until it restarts",
            status=404,
            code="previous_response_not_found",
            param="previous_response_id",
        )
    if kept.turns is None:
        raise RequestError(
            f"previous_response_id {previous!r} has no answer to continue (it is "
            f"{kept.body['status']})",
            code="previous_response_not_completed",
            param="previous_response_id",
        )
    return kept.turns


def _input(given: Any) -> list[Said]:
    if isinstance(given, str):
        return [("user", given, ())]
    if not isinstance(given, list) or not given:
        raise RequestError("`input` must be text or a non-empty list of messages", param="input")
    if len(given) > MAX_MESSAGES:
        raise RequestError(f"at most {MAX_MESSAGES} input items", param="input")
    said: list[Said] = []
    for index, item in enumerate(given):
        at = f"input[{index}]"
        kind = item.get("type", "message") if isinstance(item, dict) else None
        if kind in SKIPPED_ITEMS:
            continue
        if kind == "function_call":  # an earlier answer, given as the forced tool's call
            said.append(("assistant", str(item.get("arguments") or ""), ()))
            continue
        if kind != "message" or not isinstance(item.get("role"), str):
            raise RequestError(
                f"{at}: only messages are supported (a team calls no client tools), got {kind!r}",
                param=at,
            )
        said.append((item["role"], *content_of(item.get("content"), at)))
    return said


# --- what goes back ----------------------------------------------------------------------


def usage_body(usage: Usage) -> Json:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


def message_item(item_id: str, text: str | None) -> Json:
    """The answer's message item: in progress (`text` None) or done."""
    done = text is not None
    return {
        "type": "message",
        "id": item_id,
        "status": "completed" if done else "in_progress",
        "role": "assistant",
        "content": [text_part(text)] if done else [],
    }


def text_part(text: str | None) -> Json:
    return {"type": "output_text", "text": text or "", "annotations": [], "logprobs": []}


def function_call_item(reply: Reply, arguments: str | None) -> Json:
    """The answer as a call of the client's forced tool: in progress (None) or done."""
    assert reply.req.ask.output is not None
    return {
        "type": "function_call",
        "id": reply.call_item_id,
        "call_id": reply.call_id,
        "name": reply.req.ask.output.name,
        "arguments": arguments or "",
        "status": "in_progress" if arguments is None else "completed",
    }


def reasoning_item(item_id: str, summary: str | None) -> Json:
    parts = [] if summary is None else [{"type": "summary_text", "text": summary}]
    status = "in_progress" if summary is None else "completed"
    return {"type": "reasoning", "id": item_id, "status": status, "summary": parts}


@dataclass
class Reply:
    """One response as it is built, by a plain request or a stream."""

    req: ResponsesRequest
    id: str = field(default_factory=lambda: f"resp_{secrets.token_hex(16)}")
    message_id: str = field(default_factory=lambda: f"msg_{secrets.token_hex(16)}")
    reasoning_id: str = field(default_factory=lambda: f"rs_{secrets.token_hex(16)}")
    call_item_id: str = field(default_factory=lambda: f"fc_{secrets.token_hex(16)}")
    call_id: str = field(default_factory=lambda: f"call_{secrets.token_hex(12)}")
    created: int = field(default_factory=lambda: int(time.time()))

    def body(
        self,
        status: str,
        output: list[Json],
        usage: Usage | None = None,
        finish: str = "stop",
        error: Json | None = None,
    ) -> Json:
        incomplete = {"reason": "max_output_tokens"} if finish == "length" else None
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": "incomplete" if incomplete and status == "completed" else status,
            "model": self.req.model,
            "output": output,
            "usage": usage_body(usage) if usage is not None else None,
            "error": error,
            "incomplete_details": incomplete,
            "parallel_tool_calls": False,
            "tool_choice": "none",
            "tools": [],
            **self.req.echo,
        }

    def finished(self, answer: Answer, reasoning: str, stored: Responses) -> Json:
        """The whole response, stored with its conversation (unless `store` is false)."""
        output = [reasoning_item(self.reasoning_id, reasoning)] if reasoning else []
        output.append(self.answer_item(answer.text))
        done = self.body("completed", output, answer.usage, answer.finish)
        self.keep(stored, done, (*self.req.history, Turn(self.req.question, answer.text)))
        return done

    @property
    def tool(self) -> bool:
        return self.req.ask.output is not None and self.req.ask.output.tool

    def answer_item(self, text: str) -> Json:
        """The answer's output item: a message, or a call of the forced tool."""
        return function_call_item(self, text) if self.tool else message_item(self.message_id, text)

    def keep(self, stored: Responses, body: Json, turns: tuple[Turn, ...] | None = None) -> None:
        if self.req.store:
            stored.keep(body, turns)


async def stream(run: LiveRun, reply: Reply, stored: Responses) -> AsyncIterator[dict[str, str]]:
    """The Responses event stream over a run; the stored response follows it (in
    progress, then how it ended: `cancelled` if the client went away first)."""
    ended = False
    try:
        async for frame in _events(run, reply, stored):
            ended = ended or frame.get("event") in ENDINGS
            yield frame
    finally:
        if not ended:
            reply.keep(stored, reply.body("cancelled", []))


ENDINGS = ("response.completed", "response.incomplete", "response.failed")


async def _events(run: LiveRun, reply: Reply, stored: Responses) -> AsyncIterator[Frame]:
    """Every event carries `sequence_number`."""
    frames = _Frames(reply, stored)
    for frame in frames.opening():
        yield frame
    async for item in follow(run, reply.req.ask):
        for frame in frames.after(item):
            yield frame
    yield {"data": "[DONE]"}


class _Frames:
    """One Responses stream's frames, made as the run goes: a reasoning item while the
    team works, then the message (or the forced tool's call) and how the response ended."""

    def __init__(self, reply: Reply, stored: Responses) -> None:
        self.reply, self.stored = reply, stored
        self.numbers = iter(range(1_000_000_000))
        self.progress: list[str] = []  # the reasoning item's summary so far
        self.text: list[str] = []  # the answer so far
        self.msg = {"item_id": reply.message_id, "content_index": 0}

    def event(self, kind: str, **fields: Any) -> Frame:
        data = {"type": kind, "sequence_number": next(self.numbers), **fields}
        return {"event": kind, "data": json.dumps(data, ensure_ascii=False)}

    @property
    def reasoning(self) -> str:
        return "".join(self.progress)

    @property
    def index(self) -> int:
        """The answer's output index: after the reasoning item, if there is one."""
        return 1 if self.progress else 0

    def opening(self) -> Iterator[Frame]:
        created = self.reply.body("in_progress", [])
        self.reply.keep(self.stored, created)
        yield self.event("response.created", response=created)
        yield self.event("response.in_progress", response=created)

    def after(self, item: Followed) -> Iterator[Frame]:
        if isinstance(item, Progress):
            yield from self._progress(item.line)
        elif isinstance(item, Text):
            yield from self._text(item.delta)
        elif isinstance(item, Failed):
            yield from self._failed(item)
        else:
            yield from self._answered(item)

    def _progress(self, line: str) -> Iterator[Frame]:
        if self.text:  # the reasoning item is closed once the answer began
            return
        rs = {"item_id": self.reply.reasoning_id, "summary_index": 0, "output_index": 0}
        if not self.progress:
            yield self.event("response.output_item.added", output_index=0,
                             item=reasoning_item(self.reply.reasoning_id, None))  # fmt: skip
            yield self.event("response.reasoning_summary_part.added", **rs,
                             part={"type": "summary_text", "text": ""})  # fmt: skip
        self.progress.append(line)
        yield self.event("response.reasoning_summary_text.delta", **rs, delta=line)

    def _text(self, delta: str) -> Iterator[Frame]:
        if self.reply.tool:  # held JSON: sent whole at the end
            self.text.append(delta)
            return
        if not self.text:
            yield from _open_message(self.event, self.reply, self.reasoning, self.msg)
        self.text.append(delta)
        yield self.event("response.output_text.delta", **self.msg, output_index=self.index,
                         delta=delta, logprobs=[])  # fmt: skip

    def _failed(self, item: Failed) -> Iterator[Frame]:
        error = item.body()["error"]
        yield self.event("error", code=error["code"], message=error["message"], param=None,
                         error=error)  # fmt: skip
        said = {"code": error["code"], "message": error["message"]}
        failed = self.reply.body("failed", [], error=said)
        self.reply.keep(self.stored, failed)
        yield self.event("response.failed", response=failed)

    def _answered(self, item: Answer) -> Iterator[Frame]:
        if self.reply.tool:
            yield from _call_tool(self.event, self.reply, self.reasoning, "".join(self.text))
        else:
            yield from self._message_done()
        answer = Answer("".join(self.text), item.finish, item.usage)
        done = self.reply.finished(answer, self.reasoning, self.stored)
        yield self.event(_ending(done), response=done)

    def _message_done(self) -> Iterator[Frame]:
        """The message item, opened now if no text came before the end, and closed."""
        if not self.text:
            yield from _open_message(self.event, self.reply, self.reasoning, self.msg)
        whole = "".join(self.text)
        at = {**self.msg, "output_index": self.index}
        yield self.event("response.output_text.done", **at, text=whole, logprobs=[])
        yield self.event("response.content_part.done", **at, part=text_part(whole))
        yield self.event("response.output_item.done", output_index=self.index,
                         item=message_item(self.reply.message_id, whole))  # fmt: skip


def _ending(done: Json) -> str:
    return "response.incomplete" if done["status"] == "incomplete" else "response.completed"


def _close_reasoning(event: Any, reply: Reply, reasoning: str) -> list[dict[str, str]]:
    if not reasoning:
        return []
    rs = {"item_id": reply.reasoning_id, "summary_index": 0, "output_index": 0}
    part = {"type": "summary_text", "text": reasoning}
    return [
        event("response.reasoning_summary_text.done", **rs, text=reasoning),
        event("response.reasoning_summary_part.done", **rs, part=part),
        event("response.output_item.done", output_index=0,
              item=reasoning_item(reply.reasoning_id, reasoning)),
    ]  # fmt: skip


def _call_tool(event: Any, reply: Reply, reasoning: str, arguments: str) -> list[dict[str, str]]:
    """The whole answer as the forced tool's call, after the reasoning item (if any)."""
    index = 1 if reasoning else 0
    at = {"item_id": reply.call_item_id, "output_index": index}
    return [
        *_close_reasoning(event, reply, reasoning),
        event("response.output_item.added", output_index=index,
              item=function_call_item(reply, None)),
        event("response.function_call_arguments.delta", **at, delta=arguments),
        event("response.function_call_arguments.done", **at, arguments=arguments,
              name=function_call_item(reply, arguments)["name"]),
        event("response.output_item.done", output_index=index,
              item=function_call_item(reply, arguments)),
    ]  # fmt: skip


def _open_message(event: Any, reply: Reply, reasoning: str, msg: Json) -> list[dict[str, str]]:
    """Close the reasoning item (if any), then open the message item and its text part."""
    frames = _close_reasoning(event, reply, reasoning)
    index = 1 if reasoning else 0
    frames.append(event("response.output_item.added", output_index=index,
                        item=message_item(reply.message_id, None)))  # fmt: skip
    frames.append(event("response.content_part.added", **msg, output_index=index,
                        part=text_part("")))  # fmt: skip
    return frames
