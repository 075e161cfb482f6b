"""OpenAI Chat Completions, the wire format most providers and local servers speak.

Provider payloads and SDK exceptions stop here: callers see `BackendEvent`s and
`BackendError`s only. The SDK's own retries are off; `retry.retrying` wraps each call so
retries are bounded, jittered and never repeat streamed text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import openai

from massgen.backends import media, wires
from massgen.backends.common import (
    Endpoint,
    HttpSdkBackend,
    StreamState,
    client_options,
    endpoint_for,
    wire_params,
)
from massgen.backends.profiles import Profile
from massgen.backends.retry import parse_retry_after
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.core.citations import Citations

# Servers put reasoning in non-standard delta fields: vLLM/DeepSeek `reasoning_content`,
# OpenRouter/Ollama/newer vLLM `reasoning`.
_REASONING_FIELDS = ("reasoning_content", "reasoning")
_CONTEXT_WORDING = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|"
    r"reduce the length|input is too long",
    re.IGNORECASE,
)


class OpenAiSdkBackend(HttpSdkBackend):
    """What the two wires of the `openai` SDK (chat completions, responses) share: its errors."""

    def map_sdk_error(self, exc: Exception) -> errors.BackendError | None:
        if isinstance(exc, openai.OpenAIError):
            return map_error(exc, self.name)
        return None


class ChatCompletionsBackend(OpenAiSdkBackend):
    """One model behind an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url, **client_options(endpoint, openai)
        )

    async def _events(self, request: types.Request) -> AsyncIterator[types.BackendEvent]:
        stream = await self._client.chat.completions.create(**self._payload(request))
        state = _StreamState(self.name, searched="web_search" in request.hosted)
        close = functools.partial(state.close, prompt_chars(request))
        async for event in self._relay(stream, state.feed, close):
            yield event

    def _payload(self, request: types.Request) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [_message(m) for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            payload["tools"] = [_tool(t) for t in request.tools]
        if request.json_schema is not None:
            payload["response_format"] = _response_format(request.json_schema)
        payload.update(wire_params(request.params, wires.CHAT_COMPLETIONS.params))
        extra = dict(request.params.extra_body or {})
        if "web_search" in request.hosted:  # OpenRouter's web plugin (`wires.OPENROUTER`)
            extra.setdefault("plugins", [{"id": "web"}])
        if extra:
            payload["extra_body"] = extra
        return payload


# --- request conversion -----------------------------------------------------------------


def _message(message: types.Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.attachments:  # text first, then each file as its content part
        text = [{"type": "text", "text": message.content}] if message.content else []
        out["content"] = text + [media.chat_part(a) for a in message.attachments]
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return out


def _tool(spec: types.ToolSpec) -> dict[str, Any]:
    function = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
    return {"type": "function", "function": function}


def _response_format(schema: dict[str, Any]) -> dict[str, Any]:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def prompt_chars(request: types.Request) -> int:
    """Characters of a request as sent, tools in Chat Completions shape."""
    chars = sum(
        len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in request.messages
    )
    if request.tools:
        chars += len(json.dumps([_tool(t) for t in request.tools]))
    return chars


# --- stream normalisation ---------------------------------------------------------------


@dataclass(slots=True)
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class _StreamState(StreamState):
    """What one streamed completion has said so far."""

    def __init__(self, provider: str, searched: bool = False) -> None:
        super().__init__(provider)
        self._calls: dict[int, _PendingCall] = {}
        # A hosted web search (OpenRouter's plugin) reports only the sources it cites, as
        # `url_citation` annotations in a delta; they become one search and a Sources list.
        self._searched = searched
        self._citations = Citations()

    def _feed(self, chunk: Any) -> list[types.BackendEvent]:
        if chunk.usage is not None:
            self._usage = chunk.usage
        events: list[types.BackendEvent] = []
        for choice in chunk.choices or ():
            if choice.index not in (0, None):
                continue  # we ask for one choice; ignore any others
            events.extend(self._delta(choice.delta))
            self._finish = choice.finish_reason or self._finish
        return events

    def _delta(self, delta: Any) -> list[types.BackendEvent]:
        if delta is None:
            return []
        events: list[types.BackendEvent] = []
        reasoning = _reasoning_text(delta)
        if reasoning:
            self._output_chars += len(reasoning)
            events.append(types.ReasoningChunk(reasoning))
        if delta.content:
            self._output_chars += len(delta.content)
            events.append(types.TextChunk(delta.content))
        for position, part in enumerate(delta.tool_calls or ()):
            self._tool_delta(position, part)
        if self._searched:
            self._cite((delta.model_extra or {}).get("annotations"))
        return events

    def _cite(self, annotations: Any) -> None:
        for annotation in annotations if isinstance(annotations, list) else ():
            cited = annotation.get("url_citation") if isinstance(annotation, dict) else None
            if annotation.get("type") == "url_citation" and isinstance(cited, dict):
                url, title = cited.get("url"), cited.get("title")
                self._citations.number(types.Source(str(url or ""), str(title or "")))

    def close(self, prompt_chars: int) -> list[types.BackendEvent]:
        """As every wire closes, after the search its citations came from and the
        `Sources:` list that ends the text."""
        found = self._citations.sources
        if not found:
            return super().close(prompt_chars)
        search = types.HostedActivity("web_search_0", "web_search", sources=found)
        sources = types.TextChunk(self._citations.block())
        self._output_chars += len(sources.text)
        return [search, sources, *super().close(prompt_chars)]

    def _tool_delta(self, position: int, part: Any) -> None:
        index = part.index if part.index is not None else position
        call = self._calls.setdefault(index, _PendingCall())
        call.id = call.id or part.id or ""
        if part.function is not None:
            call.name = call.name or part.function.name or ""
            call.arguments += part.function.arguments or ""
            self._output_chars += len(part.function.arguments or "")

    def _tool_calls(self) -> list[types.ToolCall]:
        return [self._tool_call(i, c) for i, c in sorted(self._calls.items())]

    def _tool_call(self, index: int, call: _PendingCall) -> types.ToolCall:
        if not call.name:
            raise errors.MalformedResponse("tool call without a name", provider=self._provider)
        return types.ToolCall(call.id or f"call_{index}", call.name, call.arguments or "{}")

    def _counted(self, raw: Any) -> types.Usage:
        return _usage(raw)


def _reasoning_text(delta: Any) -> str:
    extra = delta.model_extra or {}
    for field in _REASONING_FIELDS:
        value = extra.get(field)
        if isinstance(value, str) and value:
            return value
    return ""


def _usage(raw: Any) -> types.Usage:
    prompt_details = getattr(raw, "prompt_tokens_details", None)
    completion_details = getattr(raw, "completion_tokens_details", None)
    return types.Usage(
        input_tokens=raw.prompt_tokens or 0,
        output_tokens=raw.completion_tokens or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
        cached_input_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
    )


# --- errors -----------------------------------------------------------------------------


def map_error(exc: openai.OpenAIError, provider: str) -> errors.BackendError:
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, provider)
    if isinstance(exc, openai.APIConnectionError):
        return errors.unreachable(exc, exc.message, provider)
    if isinstance(exc, openai.APIError):
        # An error event inside an otherwise healthy stream.
        return errors.ProviderUnavailable(_provider_message(exc), provider=provider)
    return errors.BadRequest(str(exc), provider=provider)


def _status_error(exc: openai.APIStatusError, provider: str) -> errors.BackendError:
    status = exc.status_code
    message = _provider_message(exc)
    wait = _retry_after(exc.response.headers)
    too_long = status in (400, 413, 422) and _is_context_error(exc, message)
    return errors.for_status(status, message, provider, retry_after=wait, too_long=too_long)


def _provider_message(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"]:
        return body["message"]
    if isinstance(body, str) and body:
        return body
    return exc.message


def _is_context_error(exc: openai.APIError, message: str) -> bool:
    return exc.code == "context_length_exceeded" or bool(_CONTEXT_WORDING.search(message))


def _retry_after(headers: Any) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> ChatCompletionsBackend:
    """The entry point of `wires.CHAT_COMPLETIONS`."""
    return ChatCompletionsBackend(endpoint_for(cfg, profile, api_key))
