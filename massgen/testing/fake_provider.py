"""A loopback fake of an OpenAI-compatible Chat Completions server.

It speaks the real wire protocol (HTTP/1.1, JSON errors, chunked SSE `data: {...}` events
ending in `data: [DONE]`), so the real openai SDK can be tested against it without
monkeypatching. A policy decides each reply; faults (HTTP errors, dropped or stalled
streams, unparseable chunks) are part of a reply. Stdlib only: the benchmark uses it too.

    with FakeProvider(Scripted([Reply(text="hi")])) as fp:
        backend = ChatCompletionsBackend(model="m", base_url=fp.base_url, api_key="k")
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FakeUsage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Fault:
    """What goes wrong with a reply. `status` set: an HTTP error instead of a stream.
    Otherwise the stream misbehaves at chunk `at_chunk` (0 = before the first event)."""

    status: int | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    drop_after_chunks: int | None = None
    malformed_chunk: bool = False
    stall_seconds: float = 0.0
    at_chunk: int = 0

    @classmethod
    def http(
        cls,
        status: int,
        message: str,
        *,
        code: str | None = None,
        kind: str = "invalid_request_error",
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        return cls(status=status, body=body, headers=dict(headers or {}))

    @classmethod
    def rate_limited(cls, retry_after: float | None = None, message: str = "") -> Fault:
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
        text = message or "Rate limit reached for requests. Please try again later."
        return cls.http(429, text, code="rate_limit_exceeded", kind="requests", headers=headers)

    @classmethod
    def unauthorized(cls, message: str = "Incorrect API key provided.") -> Fault:
        return cls.http(401, message, code="invalid_api_key")

    @classmethod
    def server_error(
        cls, message: str = "The server had an error processing your request."
    ) -> Fault:
        return cls.http(500, message, kind="server_error")

    @classmethod
    def context_length_exceeded(cls, message: str = "") -> Fault:
        text = message or (
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9001 tokens. Please reduce the length of the messages."
        )
        return cls.http(400, text, code="context_length_exceeded")


@dataclass(frozen=True, slots=True)
class Reply:
    """One completion. `tool_calls` are (name, arguments) pairs. `usage="auto"` derives
    counts from the text; None sends no usage. `finish_reason="auto"` is "tool_calls" or
    "stop"; None ends the stream without one."""

    text: str = ""
    reasoning: str = ""
    tool_calls: Sequence[tuple[str, Mapping[str, Any]]] = ()
    usage: FakeUsage | Literal["auto"] | None = "auto"
    fault: Fault | None = None
    finish_reason: str | None = "auto"
    # vLLM/DeepSeek say `reasoning_content`; OpenRouter/Ollama say `reasoning`.
    reasoning_field: str = "reasoning_content"


Policy = Callable[[Json], Reply]


# --- policies ---------------------------------------------------------------------------


class Scripted:
    """Replies in order, one per request; a mapping gives each model its own queue."""

    def __init__(self, replies: Iterable[Reply] | Mapping[str, Iterable[Reply]]) -> None:
        self._lock = threading.Lock()
        self._per_model = isinstance(replies, Mapping)
        if isinstance(replies, Mapping):
            self._queues = {model: deque(queue) for model, queue in replies.items()}
        else:
            self._queues = {None: deque(replies)}

    def __call__(self, request: Json) -> Reply:
        key = request.get("model") if self._per_model else None
        with self._lock:
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
        # A 400 is not retried, so a test with too few replies fails at once and says why.
        return Reply(fault=Fault.http(400, f"FakeProvider: script exhausted (model {key!r})"))

    @property
    def remaining(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())


def cooperative_agent(request: Json) -> Reply:
    """A sensible team member: votes when there is something to vote for, else answers;
    plain text when no tools are offered; a JSON object when one is asked for.

    Stateless (safe across threads and servers): the answer's number counts this model's
    earlier answers visible in the prompt.
    """
    model = str(request.get("model") or "fake")
    tools = _offered_tools(request)
    answer = _answer_text(request, model)
    reason = f"{model}: this answer is complete and correct."
    if "vote" in tools and _vote_target(tools["vote"]):
        return Reply(tool_calls=[("vote", _sample(tools["vote"], lambda _: reason, True))])
    if "new_answer" in tools:
        return Reply(tool_calls=[("new_answer", _sample(tools["new_answer"], lambda _: answer))])
    schema = _requested_schema(request)
    if schema is not None:
        texts = lambda name: reason if name == "reason" else answer  # noqa: E731
        return Reply(text=json.dumps(_sample(schema, texts, _has_target(schema))))
    return Reply(text=f"Final answer from {model}. {answer}")


def _offered_tools(request: Json) -> dict[str, Json]:
    tools: dict[str, Json] = {}
    for tool in request.get("tools") or []:
        function = tool.get("function") or {}
        tools[function.get("name", "")] = function.get("parameters") or {}
    return tools


def _requested_schema(request: Json) -> Json | None:
    fmt = request.get("response_format") or {}
    if fmt.get("type") != "json_schema":
        return None
    return (fmt.get("json_schema") or {}).get("schema") or {}


def _answer_text(request: Json, model: str) -> str:
    tag = f"[{model} answer "
    seen = sum(_content_text(m).count(tag) for m in request.get("messages") or [])
    return f"{tag}{seen + 1}] A careful, complete answer written by {model}."


# --- generic JSON-schema sampling (tool arguments, structured actions) ------------------

_ACTION_WORDS = frozenset({"vote", "new_answer", "stop", "answer"})


def _vote_target(schema: Json) -> bool:
    """Whether the first enum-valued property offers anything to vote for."""
    for prop in (schema.get("properties") or {}).values():
        prop = _resolve(prop, schema)
        if "enum" in prop:
            return bool(prop["enum"])
    return False


def _has_target(schema: Json) -> bool:
    """Whether some enum in the schema lists vote targets (not action names)."""
    return any(values and not set(values) <= _ACTION_WORDS for values in _enums(schema))


def _enums(node: Any) -> Iterator[list[Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            yield node["enum"]
        for value in node.values():
            yield from _enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from _enums(value)


def _sample(
    schema: Json, text: Callable[[str], str], prefer_vote: bool = False, root: Json | None = None
) -> Any:
    """An instance of `schema`: first enum values, `text(name)` for strings."""
    return _Sampler(root or schema, text, prefer_vote).value(schema, "")


@dataclass(slots=True)
class _Sampler:
    root: Json
    text: Callable[[str], str]
    prefer_vote: bool

    def value(self, schema: Json, name: str) -> Any:
        schema = _resolve(schema, self.root)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.pick(schema["enum"])
        branches = schema.get("oneOf") or schema.get("anyOf")
        if branches:
            return self.value(self.branch(branches), name)
        return self.typed(schema, name)

    def typed(self, schema: Json, name: str) -> Any:
        kind = schema.get("type", "object" if "properties" in schema else "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            props = schema.get("properties") or {}
            keys = schema.get("required") or list(props)
            return {key: self.value(props.get(key, {}), key) for key in keys}
        if kind == "array":
            items = schema.get("items") or {}
            return [self.value(items, name)] if schema.get("minItems") else []
        simple = {"integer": 1, "number": 1, "boolean": True, "null": None}
        return simple[kind] if kind in simple else self.text(name)

    def pick(self, values: list[Any]) -> Any:
        for word in self.order():
            if word in values:
                return word
        # The lowest label, not the first offered: massgen shuffles the options per agent,
        # and a cooperative team should still agree.
        return min(values, key=str) if values else None

    def branch(self, branches: list[Json]) -> Json:
        for word in self.order():
            for branch in branches:
                if word in _literals(_resolve(branch, self.root), self.root):
                    return branch
        return branches[0]

    def order(self) -> tuple[str, ...]:
        return ("vote", "new_answer") if self.prefer_vote else ("new_answer",)


def _literals(schema: Json, root: Json) -> set[Any]:
    found: set[Any] = set()
    for prop in (schema.get("properties") or {}).values():
        prop = _resolve(prop, root)
        if "const" in prop:
            found.add(prop["const"])
        found.update(v for v in prop.get("enum") or [] if isinstance(v, str))
    return found


def _resolve(schema: Any, root: Json) -> Json:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema if isinstance(schema, dict) else {}
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


# --- the server -------------------------------------------------------------------------


class FakeProvider:
    """A Chat Completions server on 127.0.0.1 in a daemon thread.

    `latency` delays the first byte of every reply; `tokens_per_second` paces stream chunks
    (one word per chunk). Every request body is kept in `requests`, in arrival order.
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        latency: float = 0.0,
        tokens_per_second: float | None = None,
    ) -> None:
        self.policy = policy or cooperative_agent
        self.latency = latency
        self.tokens_per_second = tokens_per_second
        self._lock = threading.Lock()
        self._requests: list[Json] = []
        self._headers: list[dict[str, str]] = []
        self._closing = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeProvider:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def start(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._closing.set()  # wakes stalled handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeProvider is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[Json]:
        with self._lock:
            return list(self._requests)

    @property
    def headers(self) -> list[dict[str, str]]:
        """Request headers (lower-cased names), parallel to `requests`."""
        with self._lock:
            return list(self._headers)

    @property
    def prompt_chars(self) -> int:
        """Characters of message content sent so far, over all requests."""
        return sum(prompt_chars(body) for body in self.requests)

    def record(self, body: Json, headers: dict[str, str]) -> None:
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)

    def pause(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)


def prompt_chars(body: Json) -> int:
    """Characters of message content (and tool-call arguments) in one request body."""
    total = 0
    for message in body.get("messages") or []:
        total += len(_content_text(message))
        for call in message.get("tool_calls") or []:
            total += len((call.get("function") or {}).get("arguments") or "")
    return total


def _content_text(message: Json) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A team of 32 connects at once; the default backlog of 5 drops connections, and the
    # client retries only after a 1 s SYN timeout.
    request_queue_size = 512

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients hanging up mid-stream is normal here (cancelled runs): no traceback."""
    fake: FakeProvider


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        except ValueError as exc:
            self._json(400, {"error": {"message": f"invalid JSON body: {exc}"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        fake.record(body, {k.lower(): v for k, v in self.headers.items()})
        try:
            reply = fake.policy(body)
        except Exception as exc:  # a broken policy is a test bug: say so in the reply
            self._json(500, {"error": {"message": f"FakeProvider policy failed: {exc!r}"}})
            return
        fake.pause(fake.latency)
        try:
            self._respond(body, reply)
        except OSError:
            self.close_connection = True  # the client went away (timeout, cancel)

    def _respond(self, body: Json, reply: Reply) -> None:
        fault = reply.fault
        if fault is not None and fault.status is not None:
            self._json(fault.status, fault.body, fault.headers)
        elif body.get("stream"):
            self._stream(_stream_events(body, reply), fault or Fault())
        else:
            self._json(200, _completion(body, reply))

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: list[Json], fault: Fault) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        fake = self.server.fake
        for index, event in enumerate(events):
            if fault.drop_after_chunks == index:
                self._drop()
                return
            if fault.at_chunk == index:
                self._misbehave(fault)
            if index and fake.tokens_per_second:
                time.sleep(1 / fake.tokens_per_second)
            self._chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
        if fault.drop_after_chunks is not None:
            self._drop()
            return
        self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _misbehave(self, fault: Fault) -> None:
        self.server.fake.pause(fault.stall_seconds)
        if fault.malformed_chunk:
            self._chunk(b'data: {"id": "chatcmpl-fake", "choices": [{"delta": \n\n')

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _drop(self) -> None:
        # Abrupt close inside a chunked body: the client sees an incomplete read.
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True


# --- wire payloads ----------------------------------------------------------------------

_WORDS = re.compile(r"\s*\S+\s*|\s+")


def _words(text: str) -> list[str]:
    return _WORDS.findall(text)


def _stream_events(body: Json, reply: Reply) -> list[Json]:
    deltas: list[Json] = [{"role": "assistant", "content": ""}]
    deltas += [{reply.reasoning_field: word} for word in _words(reply.reasoning)]
    deltas += [{"content": word} for word in _words(reply.text)]
    for index, (name, arguments) in enumerate(reply.tool_calls):
        deltas += _tool_call_deltas(index, name, json.dumps(arguments))
    events = [_chunk_envelope(body, delta, None) for delta in deltas]
    finish = _finish_reason(reply)
    if finish is not None:
        events.append(_chunk_envelope(body, {}, finish))
    usage = _usage(body, reply)
    if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
        events.append({**_chunk_envelope(body, {}, None), "choices": [], "usage": usage})
    return events


def _tool_call_deltas(index: int, name: str, arguments: str) -> list[Json]:
    # Split the arguments the way real servers do: a header delta, then pieces.
    head = {"index": index, "id": f"call_fake_{index}", "type": "function"}
    first = {"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}
    step = max(1, math.ceil(len(arguments) / 3))
    pieces = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    return [first] + [
        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]} for piece in pieces
    ]


def _chunk_envelope(body: Json, delta: Json, finish: str | None) -> Json:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [choice],
    }


def _finish_reason(reply: Reply) -> str | None:
    if reply.finish_reason != "auto":
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def _usage(body: Json, reply: Reply) -> Json | None:
    usage = reply.usage
    if usage is None:
        return None
    if usage == "auto":
        arguments = sum(len(json.dumps(args)) for _, args in reply.tool_calls)
        reasoning = len(_words(reply.reasoning))
        completion = reasoning + len(_words(reply.text)) + math.ceil(arguments / 4)
        usage = FakeUsage(math.ceil(prompt_chars(body) / 4), completion, 0, reasoning)
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def _completion(body: Json, reply: Reply) -> Json:
    """A non-streaming `chat.completion` for clients that do not ask for a stream."""
    message: Json = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message[reply.reasoning_field] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_fake_{i}",
                "type": "function",
                "function": {"name": n, "arguments": json.dumps(a)},
            }
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
    choice = {"index": 0, "message": message, "finish_reason": _finish_reason(reply)}
    result: Json = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [choice],
    }
    usage = _usage(body, reply)
    if usage is not None:
        result["usage"] = usage
    return result
