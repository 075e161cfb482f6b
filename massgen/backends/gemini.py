"""Google Gemini through the google-genai SDK (`client.aio.models.generate_content_stream`).

Provider payloads and SDK exceptions stop here: callers see `BackendEvent`s and
`BackendError`s only. The SDK's own retries and automatic stream continuation are off;
`retry.retrying` wraps each call so retries are bounded, jittered and never repeat text.
The SDK talks through an httpx client we own, so `timeout` bounds the gap between bytes
of a stream (as in the Chat Completions backend) rather than the whole answer.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import httpx2 as httpx  # the transport google-genai itself depends on
import pydantic
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gt

from massgen.backends import tls, wires
from massgen.backends.common import (
    Endpoint,
    SdkBackend,
    StreamState,
    endpoint_for,
    request_chars,
    wire_params,
)
from massgen.backends.profiles import Profile
from massgen.backends.retry import parse_retry_after
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.core.citations import Citations

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
# Gemini 2.5 takes a thinking budget in tokens; Gemini 3 takes a level.
_THINKING_BUDGET = {"minimal": 128, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 24576}
_NO_THINKING = re.compile(r"^(models/)?gemini-(1\.|2\.0)", re.IGNORECASE)
_CONTEXT_WORDING = re.compile(
    r"token count.*exceeds|exceeds the maximum number of tokens|context (length|window)|"
    r"input (is )?too long|prompt is too long",
    re.IGNORECASE,
)
_AUTH_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "API_KEY_EXPIRED"})
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
_FILTERED = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
)
# A whole answer may take this long; `timeout` bounds the gap between bytes.
_CALL_DEADLINE = 27 * 60.0
# The provider-hosted tools of `wires.GEMINI.hosted`: Google Search grounding and the
# code execution tool.
_HOSTED: dict[types.HostedTool, Callable[[], gt.Tool]] = {
    "web_search": lambda: gt.Tool(google_search=gt.GoogleSearch()),
    "code_execution": lambda: gt.Tool(code_execution=gt.ToolCodeExecution()),
}


class GeminiBackend(SdkBackend):
    """One Gemini model behind the Gemini API (or anything that speaks its REST protocol)."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        timeout = endpoint.timeout
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)), verify=tls.context()
        )
        self._client = genai.Client(
            api_key=endpoint.api_key,
            vertexai=False,
            http_options=gt.HttpOptions(
                base_url=endpoint.base_url or DEFAULT_BASE_URL,
                # Milliseconds; applied by httpx to each read, not to the whole stream.
                timeout=max(1, round(timeout * 1000)),
                # Else the SDK tells the server to give up after `timeout` in all.
                headers={"X-Server-Timeout": str(math.ceil(max(_CALL_DEADLINE, timeout)))},
                retry_options=gt.HttpRetryOptions(attempts=1),
                httpx_async_client=self._http,
            ),
        )
        # Gemini signs the function calls of thinking models; the signature must come
        # back with the call on the next turn. Keyed by the ToolCall ids we hand out.
        self._signatures: dict[str, bytes] = {}
        self._call_ids = itertools.count(1)

    async def aclose(self) -> None:
        await self._http.aclose()

    def map_error(self, exc: Exception) -> errors.BackendError | None:
        if isinstance(exc, genai_errors.APIError):
            return _api_error(exc, self.name)
        if isinstance(exc, httpx.TimeoutException):  # a TransportError: tested first
            message = f"timed out waiting for the provider ({type(exc).__name__})"
            return errors.ProviderUnavailable(message, provider=self.name)
        if isinstance(exc, httpx.TransportError):
            return errors.ProviderUnavailable(_transport_message(exc), provider=self.name)
        if isinstance(exc, (genai_errors.UnknownApiResponseError, pydantic.ValidationError)):
            return errors.MalformedResponse(
                f"unparseable chunk: {_first_line(exc)}", provider=self.name
            )
        return None

    async def _events(self, request: types.Request) -> AsyncIterator[types.BackendEvent]:
        contents = _contents(request.messages, self._signatures)
        stream = await self._client.aio.models.generate_content_stream(
            model=self.model, contents=contents, config=self._config(request)
        )
        state = _StreamState(self.name, self._new_call_id)
        # Closed at once when the caller stops early, which releases the connection.
        # google-genai annotates the stream as AsyncIterator, but it returns an async
        # generator (which has `aclose`).
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for chunk in stream:
                for event in state.feed(chunk):
                    yield event
        events = state.close(request_chars(request))
        self._signatures.update(state.signatures)
        for event in events:
            yield event

    def _new_call_id(self) -> str:
        return f"call_{next(self._call_ids)}"

    def _config(self, request: types.Request) -> gt.GenerateContentConfig:
        config: dict[str, Any] = {
            "automatic_function_calling": gt.AutomaticFunctionCallingConfig(disable=True),
            # Continuation re-sends a dropped stream on its own; our retry policy decides.
            "automatic_continuation": False,
        }
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        if system:
            config["system_instruction"] = system
        tools = [_HOSTED[h]() for h in request.hosted]
        if request.tools:
            tools.insert(0, gt.Tool(function_declarations=[_declaration(t) for t in request.tools]))
        if tools:
            config["tools"] = tools
        if request.tools and request.hosted:
            # Gemini combines built-in tools with function calling only when asked to, and
            # then reports the built-in calls as `tool_call` / `tool_response` parts.
            config["tool_config"] = gt.ToolConfig(include_server_side_tool_invocations=True)
        if request.json_schema is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.json_schema
        params = request.params
        config.update(wire_params(params, wires.GEMINI.params))
        if params.extra_body:
            # The SDK merges this into the request body: the escape hatch for new API fields.
            config["http_options"] = gt.HttpOptions(extra_body=params.extra_body)
        thinking = _thinking(self.model, params.reasoning_effort, params.thinking_budget)
        if thinking is not None:
            config["thinking_config"] = thinking
        return gt.GenerateContentConfig(**config)


# --- request conversion -----------------------------------------------------------------


def _contents(messages: Iterable[types.Message], signatures: dict[str, bytes]) -> list[gt.Content]:
    """The conversation as Gemini contents; system messages go to `system_instruction`,
    tool results become `function_response` parts of a user turn."""
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    contents: list[gt.Content] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "model" if message.role == "assistant" else "user"
        parts = _parts(message, names, signatures)
        if not parts:
            continue  # Gemini rejects a turn without parts
        previous = contents[-1].parts if contents else None
        if message.role == "tool" and previous and _is_tool_turn(contents[-1]):
            previous.extend(parts)  # one user turn answers all calls
        else:
            contents.append(gt.Content(role=role, parts=parts))
    return contents


def _parts(
    message: types.Message, names: dict[str, str], signatures: dict[str, bytes]
) -> list[gt.Part]:
    if message.role == "tool":
        call_id = message.tool_call_id or ""
        response = gt.FunctionResponse(
            id=call_id or None,
            name=names.get(call_id, "tool"),
            response={"result": message.content},
        )
        return [gt.Part(function_response=response)]
    parts = [gt.Part(text=message.content)] if message.content else []
    parts += [  # media inline, as the API's `inline_data` parts
        gt.Part(inline_data=gt.Blob(mime_type=a.mime_type, data=a.data))
        for a in message.attachments
    ]
    for call in message.tool_calls:
        function_call = gt.FunctionCall(id=call.id, name=call.name, args=_arguments(call))
        parts.append(
            gt.Part(function_call=function_call, thought_signature=signatures.get(call.id))
        )
    return parts


def _is_tool_turn(content: gt.Content) -> bool:
    if not content.parts:
        return False
    return all(p.function_response is not None for p in content.parts)


def _arguments(call: types.ToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {"_unparsed_arguments": call.arguments}
    return value if isinstance(value, dict) else {"value": value}


def _declaration(spec: types.ToolSpec) -> gt.FunctionDeclaration:
    # `parameters_json_schema` takes JSON Schema as is (`additionalProperties`, `$ref`...);
    # the older `parameters` field only takes Gemini's OpenAPI subset.
    return gt.FunctionDeclaration(
        name=spec.name, description=spec.description, parameters_json_schema=spec.parameters
    )


def _thinking(model: str, effort: str | None, budget: int | None) -> gt.ThinkingConfig | None:
    if _NO_THINKING.match(model):
        return None
    # Thought summaries are what we stream as reasoning.
    config = gt.ThinkingConfig(include_thoughts=True)
    if budget is not None:
        config.thinking_budget = budget
    elif effort is None:
        return config
    elif re.match(r"^(models/)?gemini-2\.", model):
        config.thinking_budget = _THINKING_BUDGET[effort]
    else:
        # Gemini 3 levels stop at HIGH; OpenAI's `xhigh` is the most it has.
        config.thinking_level = gt.ThinkingLevel("HIGH" if effort == "xhigh" else effort.upper())
    return config


# --- stream normalisation ---------------------------------------------------------------


class _StreamState(StreamState):
    """What one streamed answer has said so far."""

    shape_errors = ()  # the SDK has parsed each chunk into its own types already

    def __init__(self, provider: str, new_id: Callable[[], str]) -> None:
        super().__init__(provider)
        self._new_id = new_id
        self._calls: list[tuple[types.ToolCall, bytes | None]] = []
        self._finish_message: str | None = None
        self._code: list[gt.ExecutableCode] = []  # code awaiting its result part
        self._grounding: gt.GroundingMetadata | None = None
        self._wrote = False  # whether the answer has text for its sources to follow

    @property
    def signatures(self) -> dict[str, bytes]:
        """The thought signature of each tool call that came with one, by call id."""
        return {call.id: signature for call, signature in self._calls if signature}

    def _feed(self, chunk: gt.GenerateContentResponse) -> list[types.BackendEvent]:
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata  # a running total: the last one counts
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            reason = _enum_name(feedback.block_reason)
            detail = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
            raise errors.BadRequest(
                f"the prompt was blocked ({reason}){detail}", provider=self._provider
            )
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        if candidate.grounding_metadata is not None:
            self._grounding = candidate.grounding_metadata  # the latest is the whole of it
        events = self._parts(candidate.content.parts if candidate.content else None)
        if candidate.finish_reason is not None:
            self._finish = _enum_name(candidate.finish_reason)
            self._finish_message = candidate.finish_message
        return events

    def _parts(self, parts: list[gt.Part] | None) -> list[types.BackendEvent]:
        events: list[types.BackendEvent] = []
        for part in parts or ():
            if part.function_call is not None:
                self._calls.append((self._tool_call(part.function_call), part.thought_signature))
            elif part.executable_code is not None:
                self._code.append(part.executable_code)
            elif part.code_execution_result is not None:
                events.append(self._code_run(part.code_execution_result))
            elif part.text:
                self._wrote = self._wrote or not part.thought
                self._output_chars += len(part.text)
                events.append(
                    types.ReasoningChunk(part.text) if part.thought else types.TextChunk(part.text)
                )
        return events

    def _code_run(self, result: gt.CodeExecutionResult) -> types.HostedActivity:
        """The code execution tool's result, with the code part that came before it."""
        code = self._code.pop(0) if self._code else gt.ExecutableCode()
        ok = _enum_name(result.outcome) == "OUTCOME_OK"
        run_id = result.id or code.id or f"code_{self._new_id()}"
        return types.HostedActivity(
            run_id, "code_execution", code=code.code or "", output=result.output or "", ok=ok
        )

    def _grounded(self) -> list[types.BackendEvent]:
        """Google Search grounding, reported once the answer is complete: the searches
        with the pages they found, and the `Sources:` list of the pages the text cites."""
        meta = self._grounding
        if meta is None or not (meta.web_search_queries or meta.grounding_chunks):
            return []
        pages = [c.web for c in meta.grounding_chunks or ()]
        found = tuple(types.Source(p.uri, p.title or "") if p and p.uri else None for p in pages)
        sources = tuple(s for s in found if s is not None)
        query = " | ".join(meta.web_search_queries or ())
        search = types.HostedActivity(f"search_{self._new_id()}", "web_search", query, sources)
        citations = Citations()
        for support in meta.grounding_supports or ():
            for index in support.grounding_chunk_indices or ():
                page = found[index] if 0 <= index < len(found) else None
                if page is not None:
                    citations.number(page)
        block = citations.block() if self._wrote else ""
        return [search, types.TextChunk(block)] if block else [search]

    def _tool_call(self, call: gt.FunctionCall) -> types.ToolCall:
        if not call.name:
            raise errors.MalformedResponse("function call without a name", provider=self._provider)
        arguments = json.dumps(call.args or {}, ensure_ascii=False)
        self._output_chars += len(arguments)
        return types.ToolCall(call.id or self._new_id(), call.name, arguments)

    def close(self, prompt_chars: int) -> list[types.BackendEvent]:
        """As `StreamState.close`.

        Raises:
            MalformedResponse: the model wrote a function call Gemini could not parse.
        """
        if self._finish == "MALFORMED_FUNCTION_CALL":
            detail = f": {self._finish_message}" if self._finish_message else ""
            raise errors.MalformedResponse(
                f"the model wrote a malformed function call{detail}", provider=self._provider
            )
        return [*self._grounded(), *super().close(prompt_chars)]

    def _tool_calls(self) -> list[types.ToolCall]:
        return [call for call, _ in self._calls]

    def _finish_reason(self, finish: str) -> str:
        if self._calls:
            return "tool_calls"
        if finish in _FILTERED:
            return "content_filter"
        return _FINISH.get(finish, finish.lower())

    def _counted(self, raw: Any) -> types.Usage | None:
        if raw.prompt_token_count is None:
            return None
        thoughts = raw.thoughts_token_count or 0
        return types.Usage(
            input_tokens=(raw.prompt_token_count or 0) + (raw.tool_use_prompt_token_count or 0),
            # Gemini bills thoughts as output but counts them apart from the candidates.
            output_tokens=(raw.candidates_token_count or 0) + thoughts,
            reasoning_tokens=thoughts,
            cached_input_tokens=raw.cached_content_token_count or 0,
        )


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value))


# --- errors -----------------------------------------------------------------------------


def _api_error(exc: genai_errors.APIError, provider: str) -> errors.BackendError:
    code = exc.code or 0
    status = exc.status or ""
    message = exc.message or _first_line(exc)
    if code in (401, 403) or status in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
        return errors.AuthFailed(message, provider=provider, status=code or None)
    if _reasons(exc) & _AUTH_REASONS:
        # Gemini answers a bad key with 400 INVALID_ARGUMENT and this reason.
        return errors.AuthFailed(message, provider=provider, status=code or None)
    if code == 429 or status == "RESOURCE_EXHAUSTED":
        wait = _retry_delay(exc)
        return errors.RateLimited(message, provider=provider, status=code or None, retry_after=wait)
    if code in (400, 413) and _CONTEXT_WORDING.search(message):
        return errors.ContextTooLong(message, provider=provider, status=code)
    if code in (408, 409, 425) or code >= 500 or status in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
        return errors.ProviderUnavailable(message, provider=provider, status=code or None)
    return errors.BadRequest(message, provider=provider, status=code or None)


def _details(exc: genai_errors.APIError) -> list[dict[str, Any]]:
    body = exc.details if isinstance(exc.details, dict) else {}
    error = body.get("error", body)
    details = error.get("details") if isinstance(error, dict) else None
    return [d for d in details or () if isinstance(d, dict)]


def _reasons(exc: genai_errors.APIError) -> set[str]:
    return {str(d["reason"]) for d in _details(exc) if "reason" in d}


def _retry_delay(exc: genai_errors.APIError) -> float | None:
    """Seconds from a google.rpc.RetryInfo detail ("37s"), else a Retry-After header."""
    for detail in _details(exc):
        if detail.get("@type") == _RETRY_INFO:
            seconds = _duration(detail.get("retryDelay"))
            if seconds is not None:
                return seconds
    headers = getattr(exc.response, "headers", None)
    return parse_retry_after(headers.get("retry-after")) if headers is not None else None


def _duration(value: Any) -> float | None:
    """A protobuf Duration in JSON form ("1.5s") as seconds."""
    if not isinstance(value, str) or not value.endswith("s"):
        return None
    try:
        return max(float(value[:-1]), 0.0)
    except ValueError:
        return None


def _transport_message(exc: httpx.TransportError) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"connection dropped mid-response ({text})"
    return f"connection error ({text})"


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> GeminiBackend:
    """The entry point of `wires.GEMINI`."""
    return GeminiBackend(endpoint_for(cfg, profile, api_key))
