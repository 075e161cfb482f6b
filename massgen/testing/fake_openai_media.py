"""A loopback fake of OpenAI's media endpoints, in the shapes the real API returns:

    POST /v1/images/generations      JSON in; `{"created", "data": [{"b64_json"}], "usage"}`
    POST /v1/audio/speech            JSON in; the audio bytes, chunked (`audio/mpeg`)
    POST /v1/audio/transcriptions    multipart in (`file`, `model`); `{"text", "usage"}`

Every request is kept in `calls` (method, path, and the JSON body or the multipart fields,
a file field as its bytes). `status` and `error` make every POST fail as the API does.

    with FakeOpenAIMedia(image=b"\\x89PNG...") as fake:
        AsyncOpenAI(base_url=fake.base_url, api_key="k").images.generate(...)
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from massgen.testing.http_fake import LoopbackServer, StreamingHandler
from massgen.testing.policy import cooperative_agent

Json = dict[str, Any]
CHUNK = 16 * 1024


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # without the query string
    body: Json = field(default_factory=dict)  # JSON, or the multipart fields


class CallLoggingServer(LoopbackServer):
    """A loopback fake that keeps every request it is sent as a `Call` (`calls`), as its
    handler threads hand them over (`keep`)."""

    def __init__(self) -> None:
        super().__init__(cooperative_agent)
        self._calls: list[Call] = []
        self._calls_lock = threading.Lock()

    @property
    def calls(self) -> list[Call]:
        with self._calls_lock:
            return list(self._calls)

    def keep(self, call: Call) -> None:
        with self._calls_lock:
            self._calls.append(call)


class FakeOpenAIMedia(CallLoggingServer):
    """OpenAI's images and audio endpoints on 127.0.0.1, in a daemon thread."""

    def __init__(
        self,
        *,
        image: bytes = b"\x89PNG\r\n\x1a\nfake-image",
        speech: bytes = b"ID3fake-speech",
        transcript: str = "hello from the fake",
        status: int | None = None,
        error: str = "the fake refuses",
    ) -> None:
        super().__init__()
        self.handler = _Handler
        self.image, self.speech, self.transcript = image, speech, transcript
        self.status, self.error = status, error

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    # --- replies: (status, content type, body) ---------------------------------------

    def post(self, path: str, body: Json) -> tuple[int, str, bytes]:
        if self.status is not None:
            return self.status, "application/json", _error(self.error, self.status)
        if path.endswith("/images/generations"):
            return 200, "application/json", _dumps(self._images(body))
        if path.endswith("/audio/speech"):
            kind = {"mp3": "audio/mpeg", "wav": "audio/wav"}.get(body.get("response_format", ""))
            return 200, kind or "application/octet-stream", self.speech
        if path.endswith("/audio/transcriptions"):
            usage = {"type": "duration", "seconds": 3}
            return 200, "application/json", _dumps({"text": self.transcript, "usage": usage})
        return 404, "application/json", _error(f"no route {path}", 404)

    def _images(self, body: Json) -> Json:
        count = int(body.get("n") or 1)
        return {
            "created": int(time.time()),
            "data": [{"b64_json": base64.b64encode(self.image).decode()}] * count,
            "background": "opaque",
            "output_format": "png",
            "quality": "high",
            "size": body.get("size", "1024x1024"),
            "usage": {
                "input_tokens": 12,
                "output_tokens": 4160,
                "total_tokens": 4172,
                "input_tokens_details": {"text_tokens": 12, "image_tokens": 0},
            },
        }


def _dumps(payload: Json) -> bytes:
    return json.dumps(payload).encode()


def _error(message: str, status: int) -> bytes:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return _dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})


def _fields(content_type: str, data: bytes) -> Json:
    """The fields of a multipart/form-data body; a file field as its bytes."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + data)
    out: Json = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        out[str(name)] = data if part.get_filename() is not None else data.decode()
    return out


class _Handler(StreamingHandler):
    @property
    def fake(self) -> FakeOpenAIMedia:
        fake: FakeOpenAIMedia = self.server.fake
        return fake

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        data = self.rfile.read(int(self.headers.get("content-length", 0)))
        content_type = self.headers.get("content-type", "")
        try:
            body = (
                _fields(content_type, data)
                if content_type.startswith("multipart/")
                else json.loads(data or b"{}")
            )
        except ValueError as exc:
            self._send(400, "application/json", _error(f"unreadable body: {exc}", 400))
            return
        self.fake.keep(Call("POST", path, body))
        self._send(*self.fake.post(path, body))

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        """JSON whole, as the API sends it; media chunked, as it streams it."""
        if content_type == "application/json":
            self._json(status, data.decode())
            return
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for start in range(0, len(data), CHUNK):
            self._chunk(data[start : start + CHUNK])
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
