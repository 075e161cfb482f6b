"""The OpenAI Responses API (`type: openai`), and the same API on Azure (`azure_openai`).

Conversation messages become Responses input items (tool calls as `function_call`, tool
results as `function_call_output`, system text as `instructions`); the event stream
becomes our `BackendEvent`s: output text, reasoning summaries, function calls with JSON
arguments, usage with cached and reasoning tokens. SDK exceptions and `response.failed`
become `BackendError`s. The SDK's own retries are off; `retry.retrying` bounds ours.

Hosted tools (`Request.hosted`) become Responses tools; `file_search` names the vector
stores in `Request.file_stores`, which this backend fills for a run (`FileSearchHost`,
`backends/file_search.py`), and its `file_search_call` items and `file_citation`
annotations become `HostedActivity` and the answer's `Sources:` list.
"""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import openai

from massgen.backends import file_search, media, wires
from massgen.backends.chat_completions import OpenAiSdkBackend, map_error, prompt_chars
from massgen.backends.common import (
    Endpoint,
    StreamState,
    client_options,
    endpoint_for,
    scrub,
    wire_params,
)
from massgen.backends.profiles import Profile
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.core.citations import Citations

# Azure's Responses API needs a recent api-version unless the endpoint is the v1 API.
DEFAULT_AZURE_API_VERSION = "2025-04-01-preview"
# The provider-hosted tools (`wires.RESPONSES.hosted`) as Responses tools (file search
# also names its vector stores, `_hosted_tool`), and what to `include` so the stream
# carries a search's sources and the code's output.
_HOSTED: dict[types.HostedTool, dict[str, Any]] = {
    "web_search": {"type": "web_search"},
    "code_execution": {"type": "code_interpreter", "container": {"type": "auto"}},
    "file_search": {"type": "file_search"},
}
_INCLUDE = {
    "web_search": "web_search_call.action.sources",
    "code_execution": "code_interpreter_call.outputs",
    "file_search": "file_search_call.results",
}


class ResponsesBackend(OpenAiSdkBackend):
    """One model behind the OpenAI Responses API (OpenAI itself, Azure, or a compatible server).

    `azure_api_version` set: `base_url` is an Azure resource endpoint and the key goes in
    the `api-key` header, as `openai.AsyncAzureOpenAI` does it.
    """

    def __init__(self, endpoint: Endpoint, *, azure_api_version: str | None = None) -> None:
        super().__init__(endpoint)
        self._client = _client(endpoint, azure_api_version)

    async def _events(self, request: types.Request) -> AsyncIterator[types.BackendEvent]:
        stream = await self._client.responses.create(**self._payload(request))
        state = _StreamState(self.name)
        close = functools.partial(state.close, prompt_chars(request))
        async for item in self._relay(stream, state.feed, close):
            yield item

    def _payload(self, request: types.Request) -> dict[str, Any]:
        instructions = "\n\n".join(m.content for m in request.messages if m.role == "system")
        payload: dict[str, Any] = {
            "model": self.model,
            "input": [item for m in request.messages for item in _input_items(m)],
            "stream": True,
            # Stateless: every request carries its whole context, nothing is kept server-side.
            "store": False,
        }
        if instructions:
            payload["instructions"] = instructions
        hosted = [h for h in request.hosted if h != "file_search" or request.file_stores]
        tools = [_tool(t) for t in request.tools] + [_hosted_tool(h, request) for h in hosted]
        if tools:
            payload["tools"] = tools
        if hosted:
            payload["include"] = [_INCLUDE[h] for h in hosted]
        if request.json_schema is not None:
            payload["text"] = {"format": _text_format(request.json_schema)}
        params = _params(request.params)
        if "text" in params:  # verbosity beside a JSON-schema format: one `text` object
            params["text"] = {**payload.get("text", {}), **params["text"]}
        payload.update(params)
        return payload

    async def open_file_store(
        self, uploads: Sequence[file_search.Upload], *, name: str, limits: file_search.Limits
    ) -> file_search.FileStore:
        """The files uploaded into one new vector store, processed (`backends/file_search.py`).

        Raises:
            BackendError: the provider refused or failed (the key scrubbed out).
            file_search.IndexingFailed: the files were not processed in time.
        """
        try:
            return await file_search.open_store(self._client, uploads, name=name, limits=limits)
        except openai.OpenAIError as exc:
            raise scrub(map_error(exc, self.name), self._secret) from None

    async def close_file_store(
        self, store: file_search.FileStore, limits: file_search.Limits
    ) -> list[str]:
        """Delete the store and its files, best effort; the ids left behind."""
        return await file_search.close_store(self._client, store, limits)


def _hosted_tool(tool: types.HostedTool, request: types.Request) -> dict[str, Any]:
    if tool == "file_search":
        return {**_HOSTED[tool], "vector_store_ids": list(request.file_stores)}
    return _HOSTED[tool]


def _params(params: types.GenerationParams) -> dict[str, Any]:
    """The typed parameters in the Responses API's terms (`wires.RESPONSES.params`, which
    Azure's shares), and `extra_body`."""
    out = wire_params(params, wires.RESPONSES.params)
    if params.extra_body:
        out["extra_body"] = params.extra_body
    return out


def _client(endpoint: Endpoint, azure_api_version: str | None) -> openai.AsyncOpenAI:
    base_url = endpoint.base_url
    common = client_options(endpoint, openai)
    if azure_api_version is None or _is_azure_v1(base_url):
        return openai.AsyncOpenAI(base_url=base_url, **common)
    return openai.AsyncAzureOpenAI(
        azure_endpoint=base_url or "", api_version=azure_api_version, **common
    )


def _is_azure_v1(base_url: str | None) -> bool:
    """Azure's v1 API (`https://RESOURCE.openai.azure.com/openai/v1/`) is plain OpenAI."""
    if not base_url:
        return False
    return urlparse(base_url).path.rstrip("/").endswith("/openai/v1")


# --- request conversion -----------------------------------------------------------------


def _input_items(message: types.Message) -> list[dict[str, Any]]:
    if message.role == "system":
        return []  # sent as `instructions`
    if message.role == "tool":
        output = {"type": "function_call_output", "call_id": message.tool_call_id}
        return [{**output, "output": message.content}]
    items: list[dict[str, Any]] = []
    if message.attachments:
        text = [{"type": "input_text", "text": message.content}] if message.content else []
        parts = text + [media.responses_part(a) for a in message.attachments]
        items.append({"role": message.role, "content": parts})
    elif message.content or not message.tool_calls:
        items.append({"role": message.role, "content": message.content})
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def _tool(spec: types.ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": False,
    }


def _text_format(schema: dict[str, Any]) -> dict[str, Any]:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))[:64]
    return {"type": "json_schema", "name": name, "schema": schema, "strict": False}


# --- stream normalisation ---------------------------------------------------------------


@dataclass(slots=True)
class _PendingCall:
    call_id: str
    name: str
    arguments: str = ""


class _StreamState(StreamState):
    """What one streamed response has said so far."""

    shape_errors = (AttributeError, TypeError, KeyError)
    unit = "event"

    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self._calls: dict[str, _PendingCall] = {}  # by output item id, in output order
        self._citations = Citations()

    def _feed(self, event: Any) -> list[types.BackendEvent]:
        kind = event.type
        if kind == "response.output_text.delta":
            return self._text(types.TextChunk(event.delta))
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._text(types.ReasoningChunk(event.delta))
        if kind == "response.reasoning_summary_part.added" and event.summary_index > 0:
            return [types.ReasoningChunk("\n\n")]  # keep summary paragraphs apart
        if kind == "response.output_item.done" and event.item.type in _HOSTED_ITEMS:
            return [_hosted(event.item)]
        if kind in ("response.output_item.added", "response.output_item.done"):
            self._item(event.item)
        elif kind == "response.output_text.annotation.added":
            self._cite(event.annotation)
        elif kind == "response.function_call_arguments.delta":
            self._calls[event.item_id].arguments += event.delta
            self._output_chars += len(event.delta)
        elif kind in ("response.completed", "response.incomplete"):
            self._end(event.response)
            return self._text(types.TextChunk(self._citations.block()))
        elif kind == "response.failed":
            raise _failure(event.response.error, self._provider)
        elif kind == "error":
            raise _failure(event, self._provider)
        return []

    def _text(self, chunk: types.TextChunk | types.ReasoningChunk) -> list[types.BackendEvent]:
        self._output_chars += len(chunk.text)
        return [chunk] if chunk.text else []

    def _cite(self, annotation: Any) -> None:
        # The SDK leaves an added annotation a plain dict; the text already links it
        # inline, so it is numbered for the `Sources:` list that ends the answer.
        kind = _field(annotation, "type")
        if kind == "url_citation":
            url, title = _field(annotation, "url"), _field(annotation, "title")
            self._citations.number(types.Source(str(url or ""), str(title or "")))
        elif kind == "file_citation":  # an uploaded file (`upload_files`), by its id
            file_id, name = _field(annotation, "file_id"), _field(annotation, "filename")
            self._citations.number(types.Source(str(file_id or ""), str(name or "")))

    def _item(self, item: Any) -> None:
        if item.type != "function_call":
            return
        call = self._calls.setdefault(item.id, _PendingCall(item.call_id, item.name))
        if item.arguments:  # `output_item.done` carries the complete arguments
            call.arguments = item.arguments

    def _end(self, response: Any) -> None:
        self._usage = response.usage
        details = response.incomplete_details
        if response.status == "incomplete":
            reason = getattr(details, "reason", None)
            self._finish = "length" if reason in (None, "max_output_tokens") else str(reason)
        else:
            self._finish = "tool_calls" if self._calls else "stop"

    # `_finish` is set by `response.completed` or `response.incomplete`: without either
    # the stream ended early.

    def _tool_calls(self) -> list[types.ToolCall]:
        return [
            types.ToolCall(c.call_id or f"call_{i}", c.name, c.arguments or "{}")
            for i, c in enumerate(self._calls.values())
        ]

    def _counted(self, raw: Any) -> types.Usage:
        return types.Usage(
            input_tokens=raw.input_tokens or 0,
            output_tokens=raw.output_tokens or 0,
            reasoning_tokens=getattr(raw.output_tokens_details, "reasoning_tokens", 0) or 0,
            cached_input_tokens=getattr(raw.input_tokens_details, "cached_tokens", 0) or 0,
        )


_HOSTED_ITEMS = frozenset({"web_search_call", "code_interpreter_call", "file_search_call"})


def _hosted(item: Any) -> types.HostedActivity:
    """A finished `web_search_call`, `code_interpreter_call` or `file_search_call` item."""
    ok = item.status == "completed"
    if item.type == "file_search_call":
        query = " | ".join(item.queries or ())
        results = {r.file_id: r.filename or "" for r in item.results or () if r.file_id}
        sources = tuple(types.Source(file_id, name) for file_id, name in results.items())
        return types.HostedActivity(item.id, "file_search", query=query, sources=sources, ok=ok)
    if item.type == "code_interpreter_call":
        logs = [o.logs for o in item.outputs or () if getattr(o, "type", "") == "logs"]
        output = "".join(logs)
        return types.HostedActivity(
            item.id, "code_execution", code=item.code or "", output=output, ok=ok
        )
    action = item.action
    query = getattr(action, "query", None) or " | ".join(getattr(action, "queries", None) or ())
    query = query or getattr(action, "url", None) or ""  # open_page / find_in_page
    found = getattr(action, "sources", None) or ()
    sources = tuple(types.Source(s.url) for s in found if getattr(s, "url", None))
    return types.HostedActivity(item.id, "web_search", query=query, sources=sources, ok=ok)


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


_CONTEXT_CODES = {"context_length_exceeded", "string_above_max_length"}


def _failure(error: Any, provider: str) -> errors.BackendError:
    """A `response.failed` error or an `error` event, as one of our errors."""
    code = getattr(error, "code", None) or ""
    message = getattr(error, "message", None) or f"response failed ({code or 'no reason given'})"
    if code in _CONTEXT_CODES:
        return errors.ContextTooLong(message, provider=provider)
    if code == "rate_limit_exceeded":
        return errors.RateLimited(message, provider=provider, status=None)
    if code in ("server_error", "") or "timeout" in code:
        return errors.ProviderUnavailable(message, provider=provider)
    return errors.BadRequest(message, provider=provider)


# --- entry points --------------------------------------------------------------


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> ResponsesBackend:
    """The entry point of `wires.RESPONSES` (`type: openai`)."""
    return ResponsesBackend(endpoint_for(cfg, profile, api_key))


def create_azure(cfg: BackendConfig, profile: Profile, api_key: str) -> ResponsesBackend:
    """The entry point of `wires.AZURE_RESPONSES` (`type: azure_openai`): `model` is the
    deployment name, `base_url` the resource endpoint."""
    version = cfg.api_version or DEFAULT_AZURE_API_VERSION
    return ResponsesBackend(endpoint_for(cfg, profile, api_key), azure_api_version=version)
