"""The Anthropic Messages API (`type: claude`).

System messages become `system`; assistant tool calls become `tool_use` blocks and tool
results `tool_result` blocks in the next user turn. The event stream becomes our
`BackendEvent`s: text, thinking (as reasoning), tool calls with JSON arguments, and usage
with cache reads counted as cached input (normalised to the OpenAI convention:
`input_tokens` includes cached and cache-written tokens). The SDK's retries are off;
`retry.retrying` bounds ours.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

from massgen.backends import media, wires
from massgen.backends.common import (
    Endpoint,
    HttpSdkBackend,
    client_options,
    endpoint_for,
    wire_params,
)
from massgen.backends.profiles import Profile
from massgen.backends.retry import parse_retry_after
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.core.citations import Citations
from massgen.log import logger

# The API requires max_tokens; this is what we ask for when the config does not say.
DEFAULT_MAX_TOKENS = 8192
_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls"}
_STOP_REASONS["max_tokens"] = "length"
_CONTEXT_WORDING = re.compile(r"prompt is too long|context (window|length)|too many tokens", re.I)
# The server tools behind `wires.ANTHROPIC_MESSAGES.hosted`. Code execution 20250825 runs
# bash and edits files (`bash_code_execution`, `text_editor_code_execution` blocks).
_HOSTED: dict[types.HostedTool, dict[str, Any]] = {
    "web_search": {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
    "code_execution": {"type": "code_execution_20250825", "name": "code_execution"},
}
CODE_EXECUTION_BETA = "code-execution-2025-08-25"
_RESULT_BLOCKS = frozenset(
    {
        "web_search_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
    }
)


class AnthropicBackend(HttpSdkBackend):
    """One Claude model behind the Messages API (or a server that speaks it)."""

    def __init__(
        self, endpoint: Endpoint, *, strict_tools: bool = False, betas: tuple[str, ...] = ()
    ) -> None:
        """`strict_tools`: every tool definition asks for strict tool use. `betas`: the
        Anthropic beta features every request asks for (the `anthropic-beta` header)."""
        super().__init__(endpoint)
        self._strict = strict_tools
        self._betas = betas
        self._loose: set[str] = set()  # tools whose schema strict mode cannot express
        # Thinking blocks must go back with the tool calls they led to; keyed by the first
        # tool_use id of the turn (our `Message` has no place for provider signatures).
        self._thinking: dict[str, list[dict[str, Any]]] = {}
        self._client = anthropic.AsyncAnthropic(
            base_url=endpoint.base_url, **client_options(endpoint, anthropic)
        )

    def map_sdk_error(self, exc: Exception) -> errors.BackendError | None:
        if isinstance(exc, anthropic.AnthropicError):
            return _map_error(exc, self.name)
        if isinstance(exc, httpx2.TransportError):
            # The SDK does not wrap transport errors raised while a stream is being read.
            reason = str(exc) or type(exc).__name__
            return errors.ProviderUnavailable(f"stream interrupted: {reason}", provider=self.name)
        return None

    async def _events(self, request: types.Request) -> AsyncIterator[types.BackendEvent]:
        stream = await self._client.messages.create(**self._payload(request))
        state = _StreamState(self.name)
        async for item in self._relay(stream, state.feed, lambda: self._closed(state)):
            yield item

    def _closed(self, state: _StreamState) -> list[types.BackendEvent]:
        """What the ended stream came to; its thinking kept for the turn its calls lead to."""
        events = state.close()
        if state.thinking and state.calls:
            self._thinking[state.calls[0].id] = state.thinking
        return events

    def _payload(self, request: types.Request) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": _turns(request.messages, self._thinking),
            "stream": True,
        }
        if system:
            payload["system"] = system
        tools = [self._tool(t) for t in request.tools] + [_HOSTED[h] for h in request.hosted]
        if tools:
            payload["tools"] = tools
        code = (CODE_EXECUTION_BETA,) if "code_execution" in request.hosted else ()
        betas = tuple(dict.fromkeys((*self._betas, *code)))
        if betas:
            payload["extra_headers"] = {"anthropic-beta": ",".join(betas)}
        payload.update(_params(request.params))
        if request.json_schema is not None:
            schema = {"type": "json_schema", "schema": request.json_schema}
            payload["output_config"] = {"format": schema, **payload.get("output_config", {})}
        return payload

    def _tool(self, spec: types.ToolSpec) -> dict[str, Any]:
        tool = _tool(spec)
        if not self._strict:
            return tool
        strict = _strict(tool)
        if strict is None and spec.name not in self._loose:
            self._loose.add(spec.name)
            logger.warning("{}: tool {} is sent without strict", self.name, spec.name)
        return strict or tool


def _params(params: types.GenerationParams) -> dict[str, Any]:
    """The typed parameters in the Messages API's terms (`wires.ANTHROPIC_MESSAGES.params`),
    with max_tokens, thinking and effort shaped here."""
    budget = params.thinking_budget
    out: dict[str, Any] = wire_params(params, wires.ANTHROPIC_MESSAGES.params)
    base = params.max_tokens or DEFAULT_MAX_TOKENS
    out["max_tokens"] = base + budget if budget and params.max_tokens is None else base
    if budget:
        out["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if params.reasoning_effort is not None:
        out["output_config"] = {"effort": _EFFORT[params.reasoning_effort]}
    body = {**out.pop("extra_body", {}), **(params.extra_body or {})}
    if body:
        out["extra_body"] = body
    return out


# --- request conversion -----------------------------------------------------------------


def _turns(
    messages: tuple[types.Message, ...], thinking: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Alternating user/assistant turns; tool results join the user turn that follows."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message, thinking)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(
    message: types.Message, thinking: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    if message.role == "tool":
        result = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        return [{**result, "content": message.content}]
    blocks: list[dict[str, Any]] = []
    if message.tool_calls:
        blocks.extend(thinking.get(message.tool_calls[0].id, ()))
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(media.anthropic_block(a) for a in message.attachments)
    for call in message.tool_calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name}
        blocks.append({**block, "input": _arguments(call.arguments)})
    return blocks


def _arguments(text: str) -> dict[str, Any]:
    """tool_use `input` must be an object; a model's malformed arguments become `{}`."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _tool(spec: types.ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}


def _strict(tool: dict[str, Any]) -> dict[str, Any] | None:
    """The tool for strict tool use (`enable_strict_tool_use`): the API then constrains
    the model's inputs to its schema. The SDK's `transform_schema` gives the schema the
    form strict mode accepts: `additionalProperties: false` on every object, and the
    constraints it cannot enforce (`minimum`, `maxLength`, ...) moved into descriptions.
    None: a schema it cannot express (a property of any type, `{}`; a list of types)."""
    try:
        schema = anthropic.transform_schema(tool["input_schema"])
    except (ValueError, AssertionError):  # assert_never on a type it does not know
        return None
    return {**tool, "input_schema": schema, "strict": True}


# --- stream normalisation ---------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    text: str = ""
    signature: str = ""
    data: str = ""
    content: Any = None  # a server tool's result, whole in its start event
    cited: list[types.Source] = field(default_factory=list)


@dataclass(slots=True)
class _StreamState:
    """What one streamed message has said so far."""

    provider: str
    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    stop: str | None = None
    stopped: bool = False
    calls: list[types.ToolCall] = field(default_factory=list)
    thinking: list[dict[str, Any]] = field(default_factory=list)
    citations: Citations = field(default_factory=Citations)

    def feed(self, event: Any) -> list[types.BackendEvent]:
        try:
            return self._feed(event)
        except (AttributeError, TypeError, KeyError) as exc:
            raise errors.MalformedResponse(
                f"unexpected event shape: {exc}", provider=self.provider
            ) from None

    def _feed(self, event: Any) -> list[types.BackendEvent]:
        kind = event.type
        if kind == "message_start":
            self._count(event.message.usage)
        elif kind == "content_block_start":
            self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._delta(self.blocks[event.index], event.delta)
        elif kind == "content_block_stop":
            return self._stop(self.blocks[event.index])
        elif kind == "message_delta":
            self.stop = event.delta.stop_reason or self.stop
            self._count(event.usage)
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _start(self, index: int, block: Any) -> None:
        self.blocks[index] = _Block(
            kind=block.type,
            # A server tool's result names its `server_tool_use` block by `tool_use_id`.
            id=getattr(block, "id", "") or getattr(block, "tool_use_id", "") or "",
            name=getattr(block, "name", "") or "",
            data=getattr(block, "data", "") or "",  # redacted_thinking
            content=getattr(block, "content", None) if block.type in _RESULT_BLOCKS else None,
        )
        if block.type == "server_tool_use" and block.input:  # whole in a non-streamed start
            self.blocks[index].text = json.dumps(block.input)

    def _stop(self, block: _Block) -> list[types.BackendEvent]:
        """A cited text block ends with its `[n]` markers; a server tool's result block
        is the tool's use, with the query or code its `server_tool_use` block sent."""
        if block.kind == "text" and block.cited:
            return [types.TextChunk(self.citations.marker(block.cited))]
        if block.kind not in _RESULT_BLOCKS:
            return []
        uses = (b for b in self.blocks.values() if b.kind == "server_tool_use")
        use = next((b for b in uses if b.id == block.id), _Block("server_tool_use"))
        return [_hosted(use, block)]

    def _delta(self, block: _Block, delta: Any) -> list[types.BackendEvent]:
        kind = delta.type
        if kind == "text_delta":
            block.text += delta.text
            return [types.TextChunk(delta.text)] if delta.text else []
        if kind == "thinking_delta":
            block.text += delta.thinking
            return [types.ReasoningChunk(delta.thinking)] if delta.thinking else []
        if kind == "input_json_delta":
            block.text += delta.partial_json
        elif kind == "signature_delta":
            block.signature += delta.signature
        elif kind == "citations_delta" and delta.citation.type == "web_search_result_location":
            citation = delta.citation
            block.cited.append(types.Source(citation.url, citation.title or ""))
        return []

    def _count(self, usage: Any) -> None:
        """Keep the latest non-null count of each kind (message_delta counts are cumulative)."""
        if usage is None:
            return
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, name, None)
            if value is not None:
                self.usage[name] = value

    def close(self) -> list[types.BackendEvent]:
        """Tool calls, usage and finish, once the stream has ended.

        Raises:
            ProviderUnavailable: the stream ended before `message_stop`.
        """
        if not self.stopped or self.stop is None:
            raise errors.ProviderUnavailable("stream ended early", provider=self.provider)
        for _, block in sorted(self.blocks.items()):
            if block.kind == "tool_use":
                self.calls.append(types.ToolCall(block.id, block.name, block.text or "{}"))
            elif block.kind == "thinking":
                self.thinking.append(
                    {"type": "thinking", "thinking": block.text, "signature": block.signature}
                )
            elif block.kind == "redacted_thinking":
                self.thinking.append({"type": "redacted_thinking", "data": block.data})
        events: list[types.BackendEvent] = [*self.calls, self._usage()]
        if self.citations.sources:
            events.insert(0, types.TextChunk(self.citations.block()))
        events.append(types.Finish(_STOP_REASONS.get(self.stop, self.stop)))
        return events

    def _usage(self) -> types.Usage:
        read = self.usage.get("cache_read_input_tokens", 0)
        written = self.usage.get("cache_creation_input_tokens", 0)
        return types.Usage(
            input_tokens=self.usage.get("input_tokens", 0) + read + written,
            output_tokens=self.usage.get("output_tokens", 0),
            cached_input_tokens=read,
        )


def _hosted(use: _Block, result: _Block) -> types.HostedActivity:
    """A server tool's use (`server_tool_use`) and its result block, as one activity."""
    arguments = _arguments(use.text)
    content = result.content
    if result.kind == "web_search_tool_result":
        found = content if isinstance(content, list) else []
        sources = tuple(types.Source(r.url, r.title or "") for r in found)
        query = str(arguments.get("query", ""))
        return types.HostedActivity(
            result.id, "web_search", query=query, sources=sources, ok=isinstance(content, list)
        )
    code = arguments.get("code") or arguments.get("command") or ""
    if use.name == "text_editor_code_execution":
        code = f"{arguments.get('command', 'edit')} {arguments.get('path', '')}".strip()
    error = getattr(content, "error_code", None)
    stdout, stderr = getattr(content, "stdout", "") or "", getattr(content, "stderr", "") or ""
    output = f"error: {error}" if error else stdout + stderr
    ok = error is None and not getattr(content, "return_code", 0)
    return types.HostedActivity(result.id, "code_execution", code=str(code), output=output, ok=ok)


# --- errors -----------------------------------------------------------------------------

_BY_TYPE: dict[str, type[errors.BackendError]] = {
    "authentication_error": errors.AuthFailed,
    "permission_error": errors.AuthFailed,
    "rate_limit_error": errors.RateLimited,
    "overloaded_error": errors.ProviderUnavailable,
    "api_error": errors.ProviderUnavailable,
    "timeout_error": errors.ProviderUnavailable,
}


def _map_error(exc: anthropic.AnthropicError, provider: str) -> errors.BackendError:
    if isinstance(exc, anthropic.APIStatusError):
        return _status_error(exc, provider)
    if isinstance(exc, anthropic.APIConnectionError):
        return errors.unreachable(exc, exc.message, provider)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return errors.MalformedResponse(exc.message, provider=provider)
    return errors.BadRequest(str(exc), provider=provider)


def _status_error(exc: anthropic.APIStatusError, provider: str) -> errors.BackendError:
    status = exc.status_code
    message = exc.api_message or exc.message
    if status == 200:  # an `error` event inside the stream
        return _BY_TYPE.get(exc.type or "", errors.ProviderUnavailable)(
            message, provider=provider, status=None
        )
    wait = parse_retry_after(exc.response.headers.get("retry-after"))
    too_long = status == 413 or (status == 400 and bool(_CONTEXT_WORDING.search(message)))
    return errors.for_status(status, message, provider, retry_after=wait, too_long=too_long)


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> AnthropicBackend:
    """The entry point of `wires.ANTHROPIC_MESSAGES`."""
    endpoint = endpoint_for(cfg, profile, api_key)
    return AnthropicBackend(endpoint, strict_tools=cfg.enable_strict_tool_use, betas=cfg.betas)
