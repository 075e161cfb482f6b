"""A loopback fake of the Anthropic Messages API (`POST /v1/messages`).

Streams the real event sequence (`message_start`, `content_block_start/delta/stop` for
thinking, text and tool_use blocks, `message_delta` with the stop reason and usage,
`message_stop`), with Anthropic's error bodies, so the real anthropic SDK runs against it
unpatched. Replies come from the same policies as `FakeProvider`:

    with FakeAnthropic(Scripted([Reply(text="hi", reasoning="think")])) as fake:
        backend = AnthropicBackend(Endpoint("test", "claude-sonnet-4-5", "k", fake.base_url))

`Reply.reasoning` is a thinking block (with a signature); `FakeUsage.cached_tokens` are
reported as `cache_read_input_tokens` (and not in `input_tokens`, as Anthropic counts).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from massgen.testing.http_fake import (
    HttpFake,
    Json,
    Wire,
    fault_message,
    finish_of,
    pieces,
    sse,
    usage_of,
    words,
)
from massgen.testing.media import SeenMedia, anthropic_media
from massgen.testing.policy import FakeCode, FakeSearch, Fault, Reply

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
SIGNATURE = "fake-signature"


class AnthropicWire(Wire):
    path = "/v1/messages"
    malformed = b'event: content_block_delta\ndata: {"type": "content_block_delta", "index"\n\n'

    def media(self, body: Json) -> list[SeenMedia]:
        return anthropic_media(body)

    def view(self, body: Json) -> Json:
        messages: list[Json] = []
        system = body.get("system")
        if isinstance(system, list):
            system = "".join(block.get("text", "") for block in system)
        if system:
            messages.append({"role": "system", "content": system})
        for message in body.get("messages") or []:
            messages.extend(_view_message(message))
        view: Json = {"model": body.get("model"), "messages": messages}
        if body.get("tools"):
            view["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t["name"], "parameters": t["input_schema"]},
                }
                for t in body["tools"]
                if "input_schema" in t
            ]
        fmt = (body.get("output_config") or {}).get("format") or {}
        if fmt.get("type") == "json_schema":
            view["response_format"] = {"type": "json_schema", "json_schema": fmt}
        return view

    def error(self, fault: Fault) -> tuple[int, Any, Mapping[str, str]]:
        status = fault.status or 500
        message, code = fault_message(fault)
        if code == "context_length_exceeded":
            message = "prompt is too long: 9001 tokens > 8192 maximum"
        return status, _error_body(_ERROR_TYPES.get(status, "api_error"), message), fault.headers

    def frames(self, body: Json, view: Json, reply: Reply) -> list[bytes]:
        return list(_Frames(body, view, reply).all())

    def stream_error(self, fault: Fault) -> bytes:
        message, code = fault_message(fault)
        kind = code if code is not None and code in _ERROR_TYPES.values() else "overloaded_error"
        if code == "server_error":
            kind = "api_error"
        return sse("error", _error_body(kind, message))

    def complete(self, body: Json, view: Json, reply: Reply) -> Json:
        frames = _Frames(body, view, reply)
        message = frames.start()
        message["content"] = [block for block, _ in frames.blocks()]
        message["stop_reason"] = _STOP_REASONS.get(finish_of(reply) or "stop", "end_turn")
        return message


class FakeAnthropic(HttpFake):
    """A Messages API server; `base_url` for `anthropic.AsyncAnthropic(base_url=...)`: the
    SDK adds `/v1/messages`."""

    wire = AnthropicWire()


def _error_body(kind: str, message: str) -> Json:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}


def _view_message(message: Json) -> list[Json]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"role": message["role"], "content": content}]
    out: list[Json] = []
    text = "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})},
        }
        for b in content or []
        if b.get("type") == "tool_use"
    ]
    for block in content or []:
        if block.get("type") == "tool_result":
            result = block.get("content")
            if isinstance(result, list):
                result = "".join(part.get("text", "") for part in result)
            out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": result})
    if text or calls or not out:
        entry: Json = {"role": message["role"], "content": text}
        if calls:
            entry["tool_calls"] = calls
        out.insert(0, entry)
    return out


class _Frames:
    """The event sequence of one streamed message."""

    def __init__(self, body: Json, view: Json, reply: Reply) -> None:
        self.model = str(body.get("model") or "fake")
        self.reply = reply
        self.usage = usage_of(view, reply)
        # Tool-use ids are unique in a conversation, as Anthropic's are (Claude Code keys
        # its tool results by them): a later turn's ids name the count of calls before it.
        # (Claude Code merges the assistant messages that share this fake's one message id,
        # so a count of messages would repeat, and a repeated id hides the later call.)
        said = [m for m in view.get("messages", ()) if m.get("role") == "assistant"]
        turn = sum(max(1, len(m.get("tool_calls") or ())) for m in said)
        self.id_prefix = "toolu_fake_" if turn == 0 else f"toolu_fake_t{turn}_"

    def start(self) -> Json:
        usage = self.usage
        cached = usage.cached_tokens if usage else 0
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": (usage.prompt_tokens - cached) if usage else 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": cached,
                "output_tokens": 1,
            },
        }

    def blocks(self) -> Iterator[tuple[Json, list[Json]]]:
        """(complete block, its deltas) for thinking, text and each tool call."""
        reply = self.reply
        if reply.reasoning:
            deltas: list[Json] = [
                {"type": "thinking_delta", "thinking": w} for w in words(reply.reasoning)
            ]
            deltas.append({"type": "signature_delta", "signature": SIGNATURE})
            block: Json = {"type": "thinking", "thinking": reply.reasoning}
            yield {**block, "signature": SIGNATURE}, deltas
        for index, use in enumerate(reply.hosted):
            yield from _server_tool(index, use)
        if reply.text:
            citations = [_citation(url, title) for url, title in _cited(reply)]
            deltas = [{"type": "citations_delta", "citation": c} for c in citations]
            deltas += [{"type": "text_delta", "text": w} for w in words(reply.text)]
            text_block: Json = {"type": "text", "text": reply.text}
            yield ({**text_block, "citations": citations} if citations else text_block), deltas
        for index, (name, arguments) in enumerate(reply.tool_calls):
            text = json.dumps(arguments)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(text)]
            block = {"type": "tool_use", "id": f"{self.id_prefix}{index}", "name": name}
            yield {**block, "input": dict(arguments)}, deltas

    def all(self) -> Iterator[bytes]:
        yield sse("message_start", {"type": "message_start", "message": self.start()})
        yield sse("ping", {"type": "ping"})
        for index, (block, deltas) in enumerate(self.blocks()):
            yield sse("content_block_start", _block_start(index, block))
            for delta in deltas:
                data = {"type": "content_block_delta", "index": index, "delta": delta}
                yield sse("content_block_delta", data)
            yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
        finish = finish_of(self.reply)
        if finish is None:
            return
        usage = {"output_tokens": self.usage.completion_tokens if self.usage else 0}
        delta = {"stop_reason": _STOP_REASONS.get(finish, finish), "stop_sequence": None}
        yield sse("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
        yield sse("message_stop", {"type": "message_stop"})


def _server_tool(index: int, use: FakeSearch | FakeCode) -> Iterator[tuple[Json, list[Json]]]:
    """A server tool's `server_tool_use` block (its input streamed) and its result block
    (whole in its start event), as the Messages API streams web search and code execution."""
    tool_id = f"srvtoolu_fake_{index}"
    if isinstance(use, FakeSearch):
        name, arguments = "web_search", {"query": use.query}
        results = [
            {"type": "web_search_result", "url": url, "title": title, "encrypted_content": "enc"}
            for url, title in use.sources
        ]
        result: Json = {"type": "web_search_tool_result", "content": results}
    else:
        name, arguments = "bash_code_execution", {"command": use.code}
        output = {"stdout": use.output, "stderr": "", "return_code": 0, "content": []}
        content = {"type": "bash_code_execution_result", **output}
        result = {"type": "bash_code_execution_tool_result", "content": content}
    text = json.dumps(arguments)
    deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(text)]
    yield {"type": "server_tool_use", "id": tool_id, "name": name, "input": arguments}, deltas
    yield {**result, "tool_use_id": tool_id}, []


def _cited(reply: Reply) -> list[tuple[str, str]]:
    """Every source of the reply's searches: the fake cites them all in its text."""
    return [s for use in reply.hosted if isinstance(use, FakeSearch) for s in use.sources]


def _citation(url: str, title: str) -> Json:
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": title,
        "cited_text": "cited text",
        "encrypted_index": "enc",
    }


def _block_start(index: int, block: Json) -> Json:
    if block["type"].endswith("_tool_result"):
        return {"type": "content_block_start", "index": index, "content_block": block}
    empty = {
        "thinking": {"type": "thinking", "thinking": "", "signature": ""},
        "text": {"type": "text", "text": ""},
    }.get(block["type"], {**block, "input": {}})
    return {"type": "content_block_start", "index": index, "content_block": empty}
