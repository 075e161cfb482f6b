"""A loopback fake of the Gemini API's media endpoints, in the shapes the real API returns
(the google-genai SDK speaks REST to it):

    POST /{version}/models/{m}:generateContent   a `GenerateContentResponse`: an image as
                                                 an `inlineData` part when the request
                                                 asks for `responseModalities: [IMAGE]`,
                                                 else `text`

Every request is kept in `calls` (method, path with query, JSON body). `status` makes
every request fail with a Google-style error.

    with FakeGeminiMedia(text="A cat.") as fake:
        genai.Client(api_key="k", http_options={"base_url": fake.base_url})
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from massgen.testing.fake_gemini import google_fault
from massgen.testing.fake_openai_media import Call, CallLoggingServer
from massgen.testing.http_fake import StreamingHandler

Json = dict[str, Any]
_POST = re.compile(r"^/v1[a-z0-9]*/models/(?P<model>[^/:]+):generateContent$")


class FakeGeminiMedia(CallLoggingServer):
    """Gemini's generateContent (text and images) on 127.0.0.1, in a daemon thread."""

    def __init__(
        self,
        *,
        text: str = "A description from the fake.",
        image: bytes = b"\x89PNG\r\n\x1a\nfake-gemini-image",
        status: int | None = None,
    ) -> None:
        super().__init__()
        self.handler = _Handler
        self.text, self.image, self.status = text, image, status

    @property
    def base_url(self) -> str:
        return self.origin

    def post(self, path: str, body: Json) -> tuple[int, Json]:
        route = _POST.match(path)
        if route is None:
            return _fault(404, f"no route {path}")
        if self.status is not None:
            return _fault(self.status, "The fake refuses this request.")
        model = route["model"]
        modalities = (body.get("generationConfig") or {}).get("responseModalities") or []
        if "IMAGE" in modalities:
            data = base64.b64encode(self.image).decode()
            part: Json = {"inlineData": {"mimeType": "image/png", "data": data}}
        else:
            part = {"text": self.text}
        return 200, _response(model, part)


def _fault(status: int, message: str) -> tuple[int, Json]:
    fault = google_fault(status, message)
    return status, fault.body


def _response(model: str, part: Json) -> Json:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": 258,
            "candidatesTokenCount": 12,
            "totalTokenCount": 270,
        },
        "modelVersion": model,
        "responseId": "fake-response",
    }


class _Handler(StreamingHandler):
    @property
    def fake(self) -> FakeGeminiMedia:
        fake: FakeGeminiMedia = self.server.fake
        return fake

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            body = json.loads(data or b"{}")
        except ValueError as exc:
            self._json(*_fault(400, f"Invalid JSON payload received. {exc}"))
            return
        self.fake.keep(Call("POST", self.path, body))
        self._json(*self.fake.post(unquote(urlsplit(self.path).path), body))
