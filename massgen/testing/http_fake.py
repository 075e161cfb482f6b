"""The loopback server under the per-provider fakes: HTTP/1.1, JSON errors, chunked SSE.

A `Wire` says how one provider's API looks (routes, event frames, error bodies); the
server plays a policy's `Reply` through it, faults included. Policies are the ones from
`policy` (`Scripted`, `cooperative_agent`): each wire shows them the request in
Chat Completions shape (`Wire.view`), so one policy drives every provider's fake.

Fault semantics are those of `policy.Fault`, plus one: a fault with a `body` and no
`status` sends that error as an event inside a healthy stream, at chunk `at_chunk`
(see `stream_error`).
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self, TypedDict, Unpack
from urllib.parse import urlsplit

from massgen.testing.media import BadPart, SeenMedia, chat_media
from massgen.testing.policy import (
    FakeUsage,
    Fault,
    Policy,
    Reply,
    cooperative_agent,
    prompt_chars,
)

Json = dict[str, Any]


class Wire:
    """One provider API format, as the fake server speaks it: a subclass names the `path` it
    serves and its frames; what it does not override is the way of Chat Completions."""

    path: str  # what the path of a generation request ends with, e.g. "/chat/completions"
    malformed: bytes  # a frame whose data is not valid JSON
    done = b""  # sent after the last frame ("" when the format has no terminator)

    def accepts(self, path: str) -> bool:
        """Whether a POST to `path` (no query string) is a generation request."""
        return path.rstrip("/").endswith(self.path)

    def view(self, body: Json) -> Json:
        """The request as a Chat Completions body, for policies."""
        return body

    def media(self, body: Json) -> list[SeenMedia]:
        """The media parts of a request, checked (`BadPart`) and decoded."""
        return chat_media(body)

    def error(self, fault: Fault) -> tuple[int, Any, Mapping[str, str]]:
        """Status, JSON body and headers of an HTTP error reply."""
        return fault.status or 500, fault.body, fault.headers

    def frames(self, body: Json, view: Json, reply: Reply) -> list[bytes]:
        """The SSE frames of a streamed reply, in order."""
        raise NotImplementedError

    def stream_error(self, fault: Fault) -> bytes:
        """An error event inside a stream."""
        raise NotImplementedError

    def complete(self, body: Json, view: Json, reply: Reply) -> Json:
        """A non-streaming reply."""
        raise NotImplementedError


def stream_error(message: str, kind: str = "server_error", *, at_chunk: int = 1) -> Fault:
    """A fault that reports an error inside the stream, after `at_chunk` frames."""
    return Fault(
        body={"error": {"message": message, "type": kind, "code": kind}}, at_chunk=at_chunk
    )


def sse(event: str | None, data: Json) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + json.dumps(data).encode() + b"\n\n"


def fault_message(fault: Fault) -> tuple[str, str | None]:
    """(message, code) of a fault built by `Fault.http` and friends."""
    error = (fault.body or {}).get("error") if isinstance(fault.body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or ""), error.get("code")
    return str(fault.body or ""), None


_WORDS = re.compile(r"\s*\S+\s*|\s+")


def words(text: str) -> list[str]:
    """Text split the way the fakes stream it: one word (with its spaces) per event."""
    return _WORDS.findall(text)


def pieces(text: str, parts: int = 3) -> list[str]:
    """`text` in up to `parts` pieces, as servers split streamed tool arguments."""
    step = max(1, math.ceil(len(text) / parts))
    return [text[i : i + step] for i in range(0, len(text), step)]


def usage_of(view: Json, reply: Reply) -> FakeUsage | None:
    """The reply's usage; "auto" counts about four characters per token."""
    if reply.usage != "auto":
        return reply.usage
    arguments = sum(len(json.dumps(args)) for _, args in reply.tool_calls)
    reasoning = len(words(reply.reasoning))
    completion = reasoning + len(words(reply.text)) + math.ceil(arguments / 4)
    return FakeUsage(math.ceil(prompt_chars(view) / 4), completion, 0, reasoning)


def finish_of(reply: Reply) -> str | None:
    """ "auto" → "tool_calls" or "stop"; None means the stream ends without finishing."""
    if reply.finish_reason != "auto":
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


class Pacing(TypedDict, total=False):
    """How fast a fake answers: `latency` delays the first byte of every reply,
    `tokens_per_second` paces frames (one word a frame)."""

    latency: float
    tokens_per_second: float | None


class ProviderFake(ABC):
    """What every fake provider holds, whatever it speaks (HTTP here, gRPC in `fake_xai`):
    the policy that scripts its replies, its pacing, and every request body it was sent
    (`requests`, in arrival order); a `with` block starts and closes it."""

    def __init__(self, policy: Policy, **pacing: Unpack[Pacing]) -> None:
        self.policy = policy
        self.latency = pacing.get("latency", 0.0)
        self.tokens_per_second = pacing.get("tokens_per_second")
        self._lock = threading.Lock()
        self._requests: list[Json] = []

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    @property
    def requests(self) -> list[Json]:
        with self._lock:
            return list(self._requests)


class LoopbackServer(ProviderFake):
    """An HTTP server on 127.0.0.1 in a daemon thread, answering with `handler`.

    Every request body, its headers and its path (with query) are kept, in arrival order.
    """

    handler: type[StreamingHandler]

    def __init__(self, policy: Policy, **pacing: Unpack[Pacing]) -> None:
        super().__init__(policy, **pacing)
        self._headers: list[dict[str, str]] = []
        self._paths: list[str] = []
        self._closing = threading.Event()
        self._server: _Server | None = None

    def start(self) -> None:
        self._server = _Server(("127.0.0.1", 0), self.handler)
        self._server.fake = self
        thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()

    def close(self) -> None:
        self._closing.set()  # wakes stalled handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:PORT`, without any API path."""
        assert self._server is not None, f"{type(self).__name__} is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def headers(self) -> list[dict[str, str]]:
        """Request headers (lower-cased names), parallel to `requests`."""
        with self._lock:
            return list(self._headers)

    @property
    def paths(self) -> list[str]:
        """Request paths with their query strings, parallel to `requests`."""
        with self._lock:
            return list(self._paths)

    def record(self, body: Json, headers: dict[str, str], path: str) -> None:
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
            self._paths.append(path)

    def pause(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)


class HttpFake(LoopbackServer):
    """A fake provider server that speaks `wire`; policies see requests in
    Chat Completions shape (`Wire.view`)."""

    wire: Wire  # the format it speaks, set by each subclass
    base_path = ""  # what `base_url` adds to `origin`: where the provider's SDK wants it

    def __init__(self, policy: Policy | None = None, **pacing: Unpack[Pacing]) -> None:
        super().__init__(policy or cooperative_agent, **pacing)
        self.handler = _Handler

    @property
    def base_url(self) -> str:
        """For the provider's SDK client, as its `base_url`."""
        return self.origin + self.base_path

    @property
    def media(self) -> list[list[SeenMedia]]:
        """The media each request carried (`Wire.media`), in arrival order."""
        return [self.wire.media(body) for body in self.requests]

    def get(self, path: str) -> tuple[int, Json] | None:
        """Status and JSON body for a GET of `path`; None: GET is not supported."""
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A team of 32 connects at once; the default backlog of 5 drops connections, and the
    # client retries only after a 1 s SYN timeout.
    request_queue_size = 512

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients hanging up mid-stream is normal here (cancelled runs): no traceback."""

    fake: Any  # the LoopbackServer it serves


class StreamingHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, quiet, and streaming frames without delay: the base of the fakes."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # Frames are written one by one; without this, Nagle's algorithm holds each small
        # write until the client's delayed ACK (~40 ms on Linux). Real servers set it too.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def _json(
        self,
        status: int,
        payload: Any,
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        """A whole JSON reply; `payload` a str is sent as it is (a malformed body)."""
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        """The head of a streamed (SSE, chunked) reply; `_chunk` sends its frames."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _drop(self) -> None:
        # Abrupt close inside a chunked body: the client sees an incomplete read.
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True


class _Handler(StreamingHandler):
    @property
    def fake(self) -> HttpFake:
        return self.server.fake

    def do_GET(self) -> None:
        answer = self.fake.get(self.path)
        if answer is None:
            self.send_error(501, f"Unsupported method ({self.command!r})")
        else:
            self._json(*answer)

    def do_POST(self) -> None:
        fake = self.fake
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        except ValueError as exc:
            self._json(400, {"error": {"message": f"invalid JSON body: {exc}"}})
            return
        if not fake.wire.accepts(urlsplit(self.path).path):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        fake.record(body, {k.lower(): v for k, v in self.headers.items()}, self.path)
        try:
            fake.wire.media(body)
        except BadPart as bad:  # what the provider answers a malformed content part
            self._json(400, {"error": {"message": str(bad), "type": "invalid_request_error"}})
            return
        view = fake.wire.view(body)
        try:
            reply = fake.policy(view)
        except Exception as exc:  # a broken policy is a test bug: say so in the reply
            self._json(500, {"error": {"message": f"{type(fake).__name__} policy failed: {exc!r}"}})
            return
        fake.pause(fake.latency)
        try:
            self._respond(body, view, reply)
        except OSError:
            self.close_connection = True  # the client went away (timeout, cancel)

    def _respond(self, body: Json, view: Json, reply: Reply) -> None:
        wire, fault = self.fake.wire, reply.fault
        if fault is not None and fault.status is not None:
            self._json(*wire.error(fault))
        elif body.get("stream"):
            self._stream(wire.frames(body, view, reply), fault or Fault())
        else:
            self._json(200, wire.complete(body, view, reply))

    def _stream(self, frames: list[bytes], fault: Fault) -> None:
        self._start_stream()
        fake = self.fake
        for index, frame in enumerate(frames):
            if fault.drop_after_chunks == index:
                self._drop()
                return
            if fault.at_chunk == index and self._misbehave(fault):
                return
            if index and fake.tokens_per_second:
                time.sleep(1 / fake.tokens_per_second)
            self._chunk(frame)
        if fault.drop_after_chunks is not None:
            self._drop()
            return
        self._end()

    def _misbehave(self, fault: Fault) -> bool:
        """Stall, send a broken frame, or end with an error event (returns True)."""
        wire = self.fake.wire
        self.fake.pause(fault.stall_seconds)
        if fault.malformed_chunk:
            self._chunk(wire.malformed)
        if fault.body is not None:
            self._chunk(wire.stream_error(fault))
            self._end()
            return True
        return False

    def _end(self) -> None:
        done = self.fake.wire.done
        if done:
            self._chunk(done)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
