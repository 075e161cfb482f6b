"""A loopback fake of the Gemini API's streaming endpoint.

It speaks the real REST protocol the google-genai SDK uses: `POST
/{version}/models/{model}:streamGenerateContent?alt=sse` answered with SSE events that each
carry one `GenerateContentResponse` JSON object, and Google-style JSON errors (`{"error":
{"code", "message", "status", "details"}}`). A policy decides each reply, as in
`fake_provider`; the same `Reply`, `Fault`, `FakeUsage` and `Scripted` work here, so a test
can script an OpenAI-compatible fake and this one alike.

    with FakeGemini(Scripted([Reply(text="hi")])) as fg:
        backend = GeminiBackend(Endpoint("test", "gemini-2.5-flash", "k", fg.base_url))

`google_fault` builds the errors Google's APIs send (the gRPC fake in `fake_xai` accepts
them too). A fault with an HTTP `status` is the response's status, or with `at_chunk` > 0
an `{"error": ...}` event after that many events, as the API sends a failure mid-stream.
Stdlib only.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Unpack
from urllib.parse import unquote, urlparse

from massgen.testing import fake_provider
from massgen.testing.fake_provider import Fault, Reply
from massgen.testing.http_fake import LoopbackServer, Pacing, StreamingHandler, usage_of, words
from massgen.testing.media import BadPart, SeenMedia, gemini_media
from massgen.testing.policy import FakeCode, FakeSearch

Json = dict[str, Any]
Policy = Callable[[Json], Reply]

# The canonical Google status name for an HTTP status (google.rpc.Code's HTTP mapping).
STATUS_NAMES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def google_fault(
    status: int,
    message: str,
    *,
    name: str | None = None,
    retry_delay: float | None = None,
    reason: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Fault:
    """An error as Google APIs send it: HTTP `status`, canonical status `name`, and in
    `details` a RetryInfo (`retry_delay` seconds) and/or an ErrorInfo (`reason`)."""
    details: list[Json] = []
    if reason is not None:
        details.append({"@type": _ERROR_INFO, "reason": reason, "domain": "googleapis.com"})
    if retry_delay is not None:
        details.append({"@type": _RETRY_INFO, "retryDelay": f"{retry_delay:g}s"})
    error: Json = {
        "code": status,
        "message": message,
        "status": name or STATUS_NAMES.get(status, "UNKNOWN"),
    }
    if details:
        error["details"] = details
    return Fault(status=status, body={"error": error}, headers=dict(headers or {}))


def rate_limited(retry_delay: float | None = None, message: str = "") -> Fault:
    text = message or "Resource has been exhausted (e.g. check quota)."
    return google_fault(429, text, retry_delay=retry_delay)


def invalid_api_key(message: str = "API key not valid. Please pass a valid API key.") -> Fault:
    # What the Gemini API really answers for a bad key: 400, not 401.
    return google_fault(400, message, reason="API_KEY_INVALID")


def permission_denied(message: str = "The caller does not have permission") -> Fault:
    return google_fault(403, message)


def server_error(message: str = "An internal error has occurred.") -> Fault:
    return google_fault(500, message)


def unavailable(message: str = "The model is overloaded. Please try again later.") -> Fault:
    return google_fault(503, message)


def context_too_long(message: str = "") -> Fault:
    text = message or (
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    )
    return google_fault(400, text)


# --- policies ---------------------------------------------------------------------------


def cooperative_agent(request: Json) -> Reply:
    """`fake_provider.cooperative_agent` for Gemini requests: answers, then votes."""
    return fake_provider.cooperative_agent(openai_view(request))


def openai_view(request: Json) -> Json:
    """The parts of a Gemini request that policies read, in Chat Completions shape
    (`model`, `messages`, `tools`, `response_format`)."""
    messages: list[Json] = []
    system = _field(request, "systemInstruction") or {}
    if system:
        messages.append({"role": "system", "content": _parts_text(system.get("parts"))})
    for content in request.get("contents") or []:
        role = "assistant" if content.get("role") == "model" else "user"
        messages.append({"role": role, "content": _parts_text(content.get("parts"))})
    tools = [
        {"type": "function", "function": _declaration(d)}
        for tool in request.get("tools") or []
        for d in _field(tool, "functionDeclarations") or []
    ]
    view: Json = {"model": request.get("model"), "messages": messages, "tools": tools}
    schema = _field(_field(request, "generationConfig") or {}, "responseJsonSchema")
    if schema is not None:
        view["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    return view


def _declaration(declaration: Json) -> Json:
    parameters = _field(declaration, "parametersJsonSchema") or declaration.get("parameters")
    return {"name": declaration.get("name", ""), "parameters": parameters or {}}


def _field(message: Json, name: str) -> Any:
    """A field by its JSON name or its proto name: the API accepts both spellings
    (the SDK sends `parameters_json_schema`, not `parametersJsonSchema`)."""
    if name in message:
        return message[name]
    return message.get(re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower())


def _parts_text(parts: Any) -> str:
    texts = []
    for part in parts or []:
        if "text" in part:
            texts.append(part["text"])
        elif _field(part, "functionResponse"):
            texts.append(json.dumps(_field(part, "functionResponse").get("response")))
        elif _field(part, "functionCall"):
            texts.append(json.dumps(_field(part, "functionCall").get("args")))
    return "".join(texts)


# --- the server -------------------------------------------------------------------------


class FakeGemini(LoopbackServer):
    """A Gemini REST server on 127.0.0.1 in a daemon thread.

    `requests` holds every request body in arrival order, each with `model` added from
    the URL; `headers` the matching request headers (lower-cased names). Policies see
    the request as Gemini sent it (`openai_view` gives the Chat Completions shape).
    """

    def __init__(self, policy: Policy | None = None, **pacing: Unpack[Pacing]) -> None:
        super().__init__(policy or cooperative_agent, **pacing)
        self.handler = _Handler

    @property
    def base_url(self) -> str:
        return self.origin

    @property
    def media(self) -> list[list[SeenMedia]]:
        """The `inline_data` parts each request carried, in arrival order."""
        return [gemini_media(body) for body in self.requests]


_ROUTE = re.compile(r"^/[^/]+/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent)$")


class _Handler(StreamingHandler):
    def do_POST(self) -> None:
        fake: FakeGemini = self.server.fake
        route = _ROUTE.match(unquote(urlparse(self.path).path))
        if route is None:
            self._error(google_fault(404, f"FakeGemini: no route {self.path}"))
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        except ValueError as exc:
            self._error(google_fault(400, f"Invalid JSON payload received. {exc}"))
            return
        request = {"model": route["model"], **body}
        fake.record(request, {k.lower(): v for k, v in self.headers.items()}, self.path)
        try:
            gemini_media(request)
        except BadPart as bad:  # what the API answers a malformed part
            self._error(google_fault(400, str(bad)))
            return
        try:
            reply = fake.policy(request)
        except Exception as exc:  # a broken policy is a test bug: say so in the reply
            self._error(google_fault(500, f"FakeGemini policy failed: {exc!r}"))
            return
        fake.pause(fake.latency)
        fault = reply.fault or Fault()
        try:
            if fault.status is not None and not fault.at_chunk:
                self._error(fault)
            else:
                self._stream(stream_events(request, reply), fault)
        except OSError:
            self.close_connection = True  # the client went away (timeout, cancel)

    def _error(self, fault: Fault) -> None:
        json_type = "application/json; charset=UTF-8"
        self._json(fault.status or 500, fault.body, fault.headers, content_type=json_type)

    def _stream(self, events: list[Json], fault: Fault) -> None:
        self._start_stream()
        fake: FakeGemini = self.server.fake
        for index, event in enumerate(events):
            if fault.drop_after_chunks == index:
                self._drop()
                return
            if fault.at_chunk == index and fault.status is not None:
                break  # an error event in place of the rest of the answer
            if fault.at_chunk == index:
                fake.pause(fault.stall_seconds)
                if fault.malformed_chunk:
                    self._chunk(b'data: {"candidates": [{"content": \r\n\r\n')
            if index and fake.tokens_per_second:
                time.sleep(1 / fake.tokens_per_second)
            self._chunk(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
        if fault.drop_after_chunks is not None:
            self._drop()
            return
        if fault.status is not None:
            self._chunk(b"data: " + json.dumps(fault.body).encode() + b"\r\n\r\n")
        self.wfile.write(b"0\r\n\r\n")


# --- wire payloads ----------------------------------------------------------------------

# The signature Gemini attaches to a function call so the next turn can continue its
# thinking; clients must send it back with the call.
THOUGHT_SIGNATURE = "ZmFrZS10aG91Z2h0LXNpZ25hdHVyZQ=="

_FINISH = {"auto": "STOP", "stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP"}


def stream_events(request: Json, reply: Reply) -> list[Json]:
    """The `GenerateContentResponse` objects streamed for `reply`: one per word of
    thoughts and text, the function calls together, then finish reason and usage."""
    parts: list[Json] = [{"text": w, "thought": True} for w in words(reply.reasoning)]
    shown = (request.get("toolConfig") or {}).get("includeServerSideToolInvocations")
    for index, use in enumerate(reply.hosted):
        if isinstance(use, FakeSearch) and shown:
            # Combined with function calling, Gemini shows its own calls as parts.
            call = {"id": f"tc_{index}", "toolType": "GOOGLE_SEARCH_WEB"}
            parts.append({"toolCall": {**call, "args": {"queries": [use.query]}}})
            parts.append({"toolResponse": {**call, "response": {"results": len(use.sources)}}})
        if isinstance(use, FakeCode):
            parts.append({"executableCode": {"language": "PYTHON", "code": use.code}})
            parts.append({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": use.output}})
    parts += [{"text": w} for w in words(reply.text)]
    events = [_response(request, [part]) for part in parts]
    if reply.tool_calls:
        calls: list[Json] = [
            {"functionCall": {"name": n, "args": dict(a)}} for n, a in reply.tool_calls
        ]
        calls[0]["thoughtSignature"] = THOUGHT_SIGNATURE
        events.append(_response(request, calls))
    if reply.finish_reason is not None:
        last = _response(request, [{"text": ""}])
        last["candidates"][0]["finishReason"] = _FINISH.get(
            reply.finish_reason, reply.finish_reason.upper()
        )
        usage = _usage(request, reply)
        if usage is not None:
            last["usageMetadata"] = usage
        events.append(last)
    grounding = _grounding(reply)
    if grounding and events:
        events[-1]["candidates"][0]["groundingMetadata"] = grounding
    return events


def _grounding(reply: Reply) -> Json | None:
    """Google Search grounding as Gemini reports it with the last chunk: the queries, a
    chunk per page, and supports tying the text to them (the fake's text cites them all)."""
    searches = [use for use in reply.hosted if isinstance(use, FakeSearch)]
    if not searches:
        return None
    pages = [{"web": {"uri": url, "title": title}} for s in searches for url, title in s.sources]
    segment = {"startIndex": 0, "endIndex": len(reply.text), "text": reply.text}
    support = {"segment": segment, "groundingChunkIndices": list(range(len(pages)))}
    return {
        "webSearchQueries": [s.query for s in searches],
        "groundingChunks": pages,
        "groundingSupports": [support] if pages and reply.text else [],
        "searchEntryPoint": {"renderedContent": "<div>Google Search suggestions</div>"},
    }


def _response(request: Json, parts: list[Json]) -> Json:
    return {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
        "modelVersion": request.get("model", "fake"),
        "responseId": "fake-response",
    }


def _usage(request: Json, reply: Reply) -> Json | None:
    usage = usage_of(openai_view(request), reply)
    if usage is None:
        return None
    # Gemini counts thoughts apart from the candidates.
    candidates = usage.completion_tokens - usage.reasoning_tokens
    metadata: Json = {
        "promptTokenCount": usage.prompt_tokens,
        "candidatesTokenCount": candidates,
        "totalTokenCount": usage.prompt_tokens + usage.completion_tokens,
    }
    if usage.reasoning_tokens:
        metadata["thoughtsTokenCount"] = usage.reasoning_tokens
    if usage.cached_tokens:
        metadata["cachedContentTokenCount"] = usage.cached_tokens
    return metadata


def prompt_chars(request: Json) -> int:
    """Characters of text in one request's contents and system instruction."""
    view = openai_view(request)
    return sum(len(m["content"]) for m in view["messages"])
