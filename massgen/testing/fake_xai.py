"""A loopback fake of xAI's gRPC Chat service, for the real xai-sdk.

A real gRPC server (`grpc.aio`, plaintext on 127.0.0.1) serving `xai_api.Chat/
GetCompletionChunk` with the protobuf messages shipped inside xai_sdk. It runs on its own
event loop in a daemon thread, so sync tests and `asyncio.run` callers can use it alike.
A policy decides each reply, as in `fake_provider`; the same `Reply`, `Fault`, `FakeUsage`
and `Scripted` work here:

    with FakeXai(Scripted([Reply(text="hi")])) as fx:
        backend = GrokBackend(Endpoint("test", "grok-4", "k", fx.base_url))

Faults are HTTP-flavoured (`Fault.rate_limited(2)`, `fake_gemini.google_fault(...)`) and
become what a gRPC server sends: the status code for the HTTP status (google.rpc.Code's
mapping, or the error body's `status` name), the body's message as details, and a
google.rpc.Status with RetryInfo in `grpc-status-details-bin` when a retry delay is given.
With `at_chunk` > 0 the call ends with that status after that many chunks.
Mid-stream faults behave as over HTTP: `drop_after_chunks` ends the call with UNAVAILABLE
(how gRPC reports a lost stream), `malformed_chunk` sends bytes that do not parse as a
chunk, `stall_seconds` pauses, `finish_reason=None` ends the call cleanly without one.

The policy sees each request as a JSON-like dict (`json_format.MessageToDict` with proto
field names: `model`, `messages`, `tools`, `response_format`, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, Unpack

import grpc
from google.protobuf import duration_pb2, json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2
from xai_sdk.proto import chat_pb2, usage_pb2

from massgen.testing import fake_provider
from massgen.testing.fake_gemini import STATUS_NAMES
from massgen.testing.fake_provider import FakeUsage, Fault, Reply
from massgen.testing.http_fake import Pacing, ProviderFake
from massgen.testing.media import BadPart, SeenMedia, xai_media
from massgen.testing.policy import FakeCode, FakeSearch

Json = dict[str, Any]
Policy = Callable[[Json], Reply]

_SERVICE = "xai_api.Chat"
_ROLES = {"ROLE_SYSTEM": "system", "ROLE_DEVELOPER": "system", "ROLE_ASSISTANT": "assistant"}
_FINISH = {
    "auto": "REASON_STOP",
    "stop": "REASON_STOP",
    "tool_calls": "REASON_TOOL_CALLS",
    "length": "REASON_MAX_LEN",
}
_WORDS = re.compile(r"\s*\S+\s*|\s+")
_MALFORMED = b"\x0a\xff\xff\xff"  # field 1, length-delimited, longer than the message
_DROPPED = Fault(status=503, body={"error": {"message": "Connection reset by peer"}})


def cooperative_agent(request: Json) -> Reply:
    """`fake_provider.cooperative_agent` for xAI requests: answers, then votes."""
    return fake_provider.cooperative_agent(openai_view(request))


def openai_view(request: Json) -> Json:
    """The parts of an xAI request that policies read, in Chat Completions shape."""
    messages = [
        {
            "role": _ROLES.get(m.get("role", ""), "user"),
            "content": "".join(c.get("text", "") for c in m.get("content") or []),
        }
        for m in request.get("messages") or []
    ]
    tools = []
    for tool in request.get("tools") or []:
        if "function" not in tool:
            continue  # a server-side tool (web_search, x_search, code_execution)
        function = tool.get("function") or {}
        parameters = json.loads(function.get("parameters") or "{}")
        tools.append({"type": "function", "function": {**function, "parameters": parameters}})
    view: Json = {"model": request.get("model"), "messages": messages, "tools": tools}
    fmt = request.get("response_format") or {}
    if fmt.get("format_type") == "FORMAT_TYPE_JSON_SCHEMA":
        schema = json.loads(fmt.get("schema") or "{}")
        view["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    return view


class FakeXai(ProviderFake):
    """An xAI Chat gRPC server on 127.0.0.1 in a daemon thread.

    `base_url` is `http://127.0.0.1:PORT` (plaintext gRPC); `requests` holds every
    request as a dict, in arrival order; `metadata` the matching request metadata.
    """

    def __init__(self, policy: Policy | None = None, **pacing: Unpack[Pacing]) -> None:
        super().__init__(policy or cooperative_agent, **pacing)
        self._metadata: list[dict[str, str]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: grpc.aio.Server | None = None
        self._closing: asyncio.Event | None = None
        self._port = 0

    def start(self) -> None:
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait()

    def _serve(self, ready: threading.Event) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._boot())
        ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def _boot(self) -> None:
        self._closing = asyncio.Event()
        self._server = grpc.aio.server()
        handler = grpc.unary_stream_rpc_method_handler(
            self._get_completion_chunk,
            request_deserializer=chat_pb2.GetCompletionsRequest.FromString,
            response_serializer=_serialize,
        )
        methods = {"GetCompletionChunk": handler}
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(_SERVICE, methods),)
        )
        self._port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()

    def close(self) -> None:
        if self._loop is None or self._server is None:
            return
        server, loop = self._server, self._loop
        self._server = None

        async def stop() -> None:
            assert self._closing is not None
            self._closing.set()  # wakes stalled handlers
            await server.stop(grace=0)

        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeXai is not running"
        return f"http://127.0.0.1:{self._port}"

    @property
    def media(self) -> list[list[SeenMedia]]:
        """The images each request carried, in arrival order."""
        return [xai_media(body) for body in self.requests]

    @property
    def metadata(self) -> list[dict[str, str]]:
        with self._lock:
            return list(self._metadata)

    headers = metadata  # the name the HTTP fakes use

    async def _pause(self, seconds: float) -> None:
        assert self._closing is not None
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), seconds)

    async def _get_completion_chunk(
        self, request: chat_pb2.GetCompletionsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        body = json_format.MessageToDict(request, preserving_proto_field_name=True)
        with self._lock:
            self._requests.append(body)
            self._metadata.append({k: str(v) for k, v in context.invocation_metadata() or ()})
        try:
            xai_media(body)
        except BadPart as bad:  # what the API answers a malformed image
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(bad))
        try:
            reply = self.policy(body)
        except Exception as exc:  # a broken policy is a test bug: say so in the reply
            await context.abort(grpc.StatusCode.INTERNAL, f"FakeXai policy failed: {exc!r}")
        await self._pause(self.latency)
        fault = reply.fault or Fault()
        chunks = stream_chunks(body, reply)
        for index, chunk in enumerate(chunks):
            if fault.status is not None and fault.at_chunk == index:
                await _abort(context, fault)
            if fault.drop_after_chunks == index:
                await _abort(context, _DROPPED)
            if fault.at_chunk == index:
                await self._pause(fault.stall_seconds)
                if fault.malformed_chunk:
                    yield _MALFORMED
            if index and self.tokens_per_second:
                await asyncio.sleep(1 / self.tokens_per_second)
            yield chunk
        if fault.status is not None or fault.drop_after_chunks is not None:
            await _abort(context, fault if fault.status is not None else _DROPPED)


def _serialize(message: Any) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


# --- faults as gRPC statuses ------------------------------------------------------------


async def _abort(context: grpc.aio.ServicerContext, fault: Fault) -> None:
    error = (fault.body or {}).get("error", {}) if isinstance(fault.body, dict) else {}
    name = error.get("status") or STATUS_NAMES.get(fault.status or 500, "UNKNOWN")
    code = getattr(grpc.StatusCode, name, grpc.StatusCode.UNKNOWN)
    message = str(error.get("message") or fault.body or "")
    delay = _retry_delay(error, fault)
    trailing: tuple[tuple[str, Any], ...] = ()
    if delay is not None:
        status = status_pb2.Status(code=code_pb2.Code.Value(name), message=message)
        info = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(
            seconds=int(delay), nanos=round((delay % 1) * 1e9)
        ))  # fmt: skip
        status.details.add().Pack(info)
        trailing = (("grpc-status-details-bin", status.SerializeToString()),)
    await context.abort(code, message, trailing_metadata=trailing)


def _retry_delay(error: Json, fault: Fault) -> float | None:
    for detail in error.get("details") or ():
        delay = str(detail.get("retryDelay") or "")
        if delay.endswith("s"):
            return float(delay[:-1])
    header = {k.lower(): v for k, v in fault.headers.items()}.get("retry-after")
    return float(header) if header else None


# --- wire payloads ----------------------------------------------------------------------


def stream_chunks(request: Json, reply: Reply) -> list[chat_pb2.GetChatCompletionChunk]:
    """The chunks streamed for `reply`: one per word of reasoning and text, the tool
    calls whole in one chunk (as xAI sends them), then the finish reason with usage."""
    reasoning = [chat_pb2.Delta(reasoning_content=w) for w in _WORDS.findall(reply.reasoning)]
    chunks = [_chunk(request, delta) for delta in reasoning]
    for index, use in enumerate(reply.hosted):
        chunks += _server_chunks(request, index, use)
    chunks += [_chunk(request, chat_pb2.Delta(content=w)) for w in _WORDS.findall(reply.text)]
    if reply.tool_calls:
        calls = [_tool_call(i, name, args) for i, (name, args) in enumerate(reply.tool_calls)]
        chunks.append(_chunk(request, chat_pb2.Delta(tool_calls=calls)))
    if reply.finish_reason is not None:
        finish = _FINISH.get(reply.finish_reason, reply.finish_reason)
        if finish == "REASON_STOP" and reply.tool_calls:
            finish = "REASON_TOOL_CALLS"
        last = _chunk(request, chat_pb2.Delta(), finish)
        usage = _usage(request, reply)
        if usage is not None:
            last.usage.CopyFrom(usage)
        # xAI sends the answer's citations, the URLs its searches drew on, at the end.
        searches = [use for use in reply.hosted if isinstance(use, FakeSearch)]
        last.citations.extend(url for use in searches for url, _ in use.sources)
        chunks.append(last)
    return chunks


_SERVER_TYPES = {
    "web_search": (chat_pb2.TOOL_CALL_TYPE_WEB_SEARCH_TOOL, "web_search"),
    "x_search": (chat_pb2.TOOL_CALL_TYPE_X_SEARCH_TOOL, "x_keyword_search"),
}


def _server_chunks(
    request: Json, index: int, use: FakeSearch | FakeCode
) -> list[chat_pb2.GetChatCompletionChunk]:
    """A server-side tool call, whole in one assistant chunk, and for code its output in
    a tool-role chunk."""
    if isinstance(use, FakeSearch):
        kind, name = _SERVER_TYPES[use.tool]
        arguments: Json = {"query": use.query}
    else:
        kind, name = chat_pb2.TOOL_CALL_TYPE_CODE_EXECUTION_TOOL, "code_execution"
        arguments = {"code": use.code}
    call = chat_pb2.ToolCall(
        id=f"srv_fake_{index}",
        type=kind,
        status=chat_pb2.TOOL_CALL_STATUS_COMPLETED,
        function=chat_pb2.FunctionCall(name=name, arguments=json.dumps(arguments)),
    )
    chunks = [_chunk(request, chat_pb2.Delta(tool_calls=[call]))]
    if isinstance(use, FakeCode):
        output = chat_pb2.CompletionOutputChunk(
            delta=chat_pb2.Delta(role=chat_pb2.ROLE_TOOL, content=use.output), index=0
        )
        chunks.append(
            chat_pb2.GetChatCompletionChunk(
                id="fake-chunk", model=request.get("model", "fake"), outputs=[output]
            )
        )
    return chunks


def _tool_call(index: int, name: str, arguments: Any) -> chat_pb2.ToolCall:
    return chat_pb2.ToolCall(
        id=f"call_fake_{index}",
        type=chat_pb2.TOOL_CALL_TYPE_CLIENT_SIDE_TOOL,
        function=chat_pb2.FunctionCall(name=name, arguments=json.dumps(arguments)),
    )


def _chunk(
    request: Json, delta: chat_pb2.Delta, finish: str | None = None
) -> chat_pb2.GetChatCompletionChunk:
    delta.role = chat_pb2.ROLE_ASSISTANT
    output = chat_pb2.CompletionOutputChunk(delta=delta, index=0)
    if finish is not None:
        output.finish_reason = finish
    return chat_pb2.GetChatCompletionChunk(
        id="fake-chunk", model=request.get("model", "fake"), outputs=[output]
    )


def _usage(request: Json, reply: Reply) -> usage_pb2.SamplingUsage | None:
    usage = reply.usage
    if usage is None:
        return None
    if usage == "auto":
        arguments = sum(len(json.dumps(args)) for _, args in reply.tool_calls)
        reasoning = len(_WORDS.findall(reply.reasoning))
        completion = reasoning + len(_WORDS.findall(reply.text)) + math.ceil(arguments / 4)
        usage = FakeUsage(math.ceil(prompt_chars(request) / 4), completion, 0, reasoning)
    # xAI counts reasoning apart from completion: total = prompt + completion + reasoning.
    return usage_pb2.SamplingUsage(
        prompt_tokens=usage.prompt_tokens,
        prompt_text_tokens=usage.prompt_tokens,
        cached_prompt_text_tokens=usage.cached_tokens,
        completion_tokens=usage.completion_tokens - usage.reasoning_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        total_tokens=usage.prompt_tokens + usage.completion_tokens,
    )


def prompt_chars(request: Json) -> int:
    """Characters of message text in one request."""
    return sum(len(m["content"]) for m in openai_view(request)["messages"])
