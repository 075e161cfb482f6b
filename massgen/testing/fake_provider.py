"""A loopback fake of an OpenAI-compatible Chat Completions server.

It speaks the real wire protocol (HTTP/1.1, JSON errors, chunked SSE `data: {...}` events
ending in `data: [DONE]`), so the real openai SDK can be tested against it without
monkeypatching. A policy decides each reply; faults (HTTP errors, dropped or stalled
streams, unparseable chunks) are part of a reply. Stdlib only: the benchmark uses it too.

    with FakeProvider(Scripted([Reply(text="hi")])) as fp:
        backend = ChatCompletionsBackend(Endpoint("test", "m", "k", fp.base_url))

The replies and policies live in `policy` and are re-exported here; the server is
`http_fake.HttpFake` speaking `ChatWire`.
"""

from __future__ import annotations

import json
import time

from massgen.testing.http_fake import (
    HttpFake,
    Json,
    Wire,
    finish_of,
    pieces,
    sse,
    usage_of,
    words,
)
from massgen.testing.policy import (
    FakeSearch,
    FakeUsage,
    Fault,
    Policy,
    Reply,
    Scripted,
    cooperative_agent,
    prompt_chars,
)

__all__ = [
    "ChatWire",
    "FakeProvider",
    "FakeUsage",
    "Fault",
    "Policy",
    "Reply",
    "Scripted",
    "cooperative_agent",
    "prompt_chars",
]


class ChatWire(Wire):
    """Chat Completions, the shape policies see every request in: `Wire`'s defaults."""

    path = "/chat/completions"
    malformed = b'data: {"id": "chatcmpl-fake", "choices": [{"delta": \n\n'
    done = b"data: [DONE]\n\n"

    def frames(self, body: Json, view: Json, reply: Reply) -> list[bytes]:
        return [sse(None, event) for event in _stream_events(body, reply)]

    def stream_error(self, fault: Fault) -> bytes:
        # What OpenAI-compatible servers send when a stream fails part-way.
        return sse(None, fault.body)

    def complete(self, body: Json, view: Json, reply: Reply) -> Json:
        return _completion(body, reply)


class FakeProvider(HttpFake):
    """A Chat Completions server on 127.0.0.1 in a daemon thread.

    `latency` delays the first byte of every reply; `tokens_per_second` paces stream chunks
    (one word per chunk). Every request body is kept in `requests`, in arrival order.
    """

    wire = ChatWire()
    base_path = "/v1"

    @property
    def prompt_chars(self) -> int:
        """Characters of message content sent so far, over all requests."""
        return sum(prompt_chars(body) for body in self.requests)

    def get(self, path: str) -> tuple[int, Json] | None:
        if path.rstrip("/").endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "fake", "object": "model"}]}
        return 404, {"error": {"message": f"no route {path}"}}


def _stream_events(body: Json, reply: Reply) -> list[Json]:
    deltas: list[Json] = [{"role": "assistant", "content": ""}]
    deltas += [{reply.reasoning_field: word} for word in words(reply.reasoning)]
    deltas += [{"content": word} for word in words(reply.text)]
    if _web_plugin(body):
        deltas += _citations(reply)
    for index, (name, arguments) in enumerate(reply.tool_calls):
        deltas += _tool_call_deltas(index, name, json.dumps(arguments))
    events = [_chunk_envelope(body, delta, None) for delta in deltas]
    finish = finish_of(reply)
    if finish is not None:
        events.append(_chunk_envelope(body, {}, finish))
    usage = _usage(body, reply)
    if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
        events.append({**_chunk_envelope(body, {}, None), "choices": [], "usage": usage})
    return events


def _web_plugin(body: Json) -> bool:
    """OpenRouter's web search plugin: `plugins: [{"id": "web", ...}]`."""
    plugins = body.get("plugins")
    return isinstance(plugins, list) and any(
        isinstance(p, dict) and p.get("id") == "web" for p in plugins
    )


def _citations(reply: Reply) -> list[Json]:
    """What OpenRouter's web plugin adds to a streamed completion: the sources it cites,
    as `url_citation` annotations (its documented message shape) in one delta after the
    text. The plugin searches before the model runs, so there is no query to report."""
    cited = [
        {
            "type": "url_citation",
            "url_citation": {
                "url": url,
                "title": title,
                "content": f"An excerpt of {title}.",
                "start_index": 0,
                "end_index": len(reply.text),
            },
        }
        for search in reply.hosted
        if isinstance(search, FakeSearch)
        for url, title in search.sources
    ]
    return [{"annotations": cited}] if cited else []


def _tool_call_deltas(index: int, name: str, arguments: str) -> list[Json]:
    # Split the arguments the way real servers do: a header delta, then pieces.
    head = {"index": index, "id": f"call_fake_{index}", "type": "function"}
    first = {"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}
    return [first] + [
        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
        for piece in pieces(arguments)
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


def _usage(body: Json, reply: Reply) -> Json | None:
    usage = usage_of(body, reply)
    if usage is None:
        return None
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
    choice = {"index": 0, "message": message, "finish_reason": finish_of(reply)}
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
