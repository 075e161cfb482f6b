"""xAI Grok through xai-sdk, which speaks gRPC (`xai_api.Chat/GetCompletionChunk`).

Provider payloads and gRPC statuses stop here: callers see `BackendEvent`s and
`BackendError`s only. The channel's own retries are off; `retry.retrying` wraps each call
so retries are bounded, jittered and never repeat streamed text. `timeout` bounds the wait
for each chunk (gRPC has no read timeout of its own; its deadline bounds the whole call).

`base_url` names the gRPC endpoint: `https://api.x.ai` (TLS, the default), or for a local
server `http://127.0.0.1:50051` or `127.0.0.1:50051` (plaintext, loopback hosts only).

xai_sdk and grpc are imported by the backend, not by this module, so the registry can run
`check` while validating a config without loading them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from massgen.backends import common, wires
from massgen.backends.profiles import LOCAL_HOSTS, Profile
from massgen.backends.retry import parse_retry_after
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.core.citations import Citations

if TYPE_CHECKING:
    import grpc
    from xai_sdk import AsyncClient
    from xai_sdk.proto import chat_pb2

DEFAULT_BASE_URL = "https://api.x.ai"
# A whole call may take this long; `timeout` bounds the gap between chunks.
_CALL_DEADLINE = 27 * 60.0
# xAI has no "minimal"; "low" is the least reasoning that still reasons.
_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
_FINISH = {
    "REASON_STOP": "stop",
    "REASON_TOOL_CALLS": "tool_calls",
    "REASON_MAX_LEN": "length",
    "REASON_MAX_CONTEXT": "length",
    "REASON_TIME_LIMIT": "time_limit",
}
# Server-side tool call types (xai_sdk's `chat_pb2.ToolCallType` values) and our names.
_SERVER_TOOLS: dict[int, types.HostedTool] = {
    2: "web_search",  # TOOL_CALL_TYPE_WEB_SEARCH_TOOL
    3: "x_search",  # TOOL_CALL_TYPE_X_SEARCH_TOOL
    4: "code_execution",  # TOOL_CALL_TYPE_CODE_EXECUTION_TOOL
}
_CONTEXT_WORDING = re.compile(
    r"maximum (prompt|context) length|context[ _-]?(length|window)|too many tokens|"
    r"prompt is too long|reduce the length",
    re.IGNORECASE,
)
# Statuses worth another try: the service or the connection failed, not the request.
_UNAVAILABLE = frozenset(
    {"UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "ABORTED", "UNKNOWN", "CANCELLED", "DATA_LOSS"}
)
_EXTRA_BODY_FIX = (
    "remove it: xai-sdk sends typed protobuf requests and has no escape hatch for extra "
    "fields; use the typed parameters (temperature, top_p, max_tokens, seed, stop, "
    "presence_penalty, frequency_penalty, reasoning_effort)"
)


def check(cfg: BackendConfig) -> tuple[str, str, str] | None:
    """The first reason `cfg` cannot work for this wire format, as the registry's
    (config key, what is wrong, how to fix it), or None. Loads no SDK."""
    if cfg.generation_params().extra_body:
        return (
            "extra_body",
            f"backend type {cfg.type!r} does not accept extra_body",
            _EXTRA_BODY_FIX,
        )
    fix = (
        "use https://HOST[:PORT], or http://127.0.0.1:PORT (or 127.0.0.1:PORT) for a local "
        "plaintext server"
    )
    base_url = cfg.base_url or DEFAULT_BASE_URL
    try:  # the same parse the backend makes, so every form it takes validates
        grpc_target(base_url)
    except ValueError as exc:
        return ("base_url", str(exc), fix)
    return _unreadable_image(cfg)


# xAI's image understanding reads these two; the other image types are refused at load.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg"})


def _unreadable_image(cfg: BackendConfig) -> tuple[str, str, str] | None:
    from massgen.config.uploads import media

    for index, entry in media(cfg.upload_files):
        if entry.kind == "image" and entry.mime_type not in IMAGE_TYPES:
            return (
                f"upload_files[{index}].{entry.key}",
                f"backend type {cfg.type!r} reads only png and jpeg images ({entry.name})",
                "convert the image to png or jpeg, or use another backend type",
            )
    return None


def grpc_target(base_url: str) -> tuple[str, bool]:
    """(host[:port] for the gRPC channel, whether it is plaintext).

    Raises:
        ValueError: not a usable endpoint, or plaintext to a host that is not loopback.
    """
    if "://" not in base_url:
        parsed = urlparse(f"//{base_url}")
        plaintext = (parsed.hostname or "") in LOCAL_HOSTS
    else:
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https"):
            raise ValueError(f"base_url {base_url!r} is neither https:// nor http://")
        plaintext = parsed.scheme == "http"
    try:
        host, port = parsed.hostname, parsed.port
    except ValueError:
        raise ValueError(f"base_url {base_url!r} has an invalid port") from None
    if not host:
        raise ValueError(f"base_url {base_url!r} names no host")
    if plaintext and host not in LOCAL_HOSTS:
        raise ValueError(f"plaintext gRPC (http://) is only allowed to a loopback host, not {host}")
    if plaintext and port is None:
        raise ValueError(f"base_url {base_url!r} needs a port for a local gRPC server")
    host = f"[{host}]" if ":" in host else host
    return (f"{host}:{port}" if port else host), plaintext


class GrokBackend(common.SdkBackend):
    """One Grok model behind xAI's gRPC API (or a server that speaks it)."""

    def __init__(self, endpoint: common.Endpoint) -> None:
        """Raises:
        ConfigError: an unusable `base_url`."""
        super().__init__(endpoint)
        try:
            self._target, self._plaintext = grpc_target(endpoint.base_url or DEFAULT_BASE_URL)
        except ValueError as exc:
            raise errors.ConfigError(str(exc), path="backend.base_url") from None
        self._timeout = endpoint.timeout
        # A grpc.aio channel belongs to the event loop it was made in: made on first use.
        self._client: AsyncClient | None = None
        self._call_ids = itertools.count(1)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def _connect(self) -> AsyncClient:
        if self._client is None:
            from xai_sdk import AsyncClient

            self._client = AsyncClient(
                api_key=self._secret,
                api_host=self._target,
                use_insecure_channel=self._plaintext,
                # gRPC's transparent retries would repeat calls behind our retry policy.
                channel_options=[("grpc.enable_retries", 0)],
                timeout=max(_CALL_DEADLINE, self._timeout),
            )
        return self._client

    def map_error(self, exc: Exception) -> errors.BackendError | None:
        import grpc

        return _rpc_error(exc, self.name) if isinstance(exc, grpc.aio.AioRpcError) else None

    async def _events(self, request: types.Request) -> AsyncIterator[types.BackendEvent]:
        if request.params.extra_body:
            raise errors.BadRequest("xai-sdk cannot send extra_body", provider=self.name)
        chat = self._connect().chat.create(self.model, **_create_args(request))
        state = _StreamState(self.name, self._new_call_id)
        async for chunk in self._chunks(chat.stream()):
            for event in state.feed(chunk):
                yield event
        for event in state.close(common.request_chars(request)):
            yield event

    async def _chunks(self, stream: AsyncGenerator[tuple[Any, Any], None]) -> AsyncIterator[Any]:
        """The SDK's chunks, each awaited at most `timeout` seconds."""
        try:
            while True:
                try:
                    # In this task, not a new one: the SDK's tracing spans must open and
                    # close in one context.
                    async with asyncio.timeout(self._timeout):
                        _, chunk = await anext(stream)
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    message = f"timed out: no data for {self._timeout:g} s"
                    raise errors.ProviderUnavailable(message, provider=self.name) from None
                except (AttributeError, TypeError) as exc:
                    # grpc hands the SDK None for bytes that do not parse as a chunk.
                    message = f"unparseable chunk ({exc})"
                    raise errors.MalformedResponse(message, provider=self.name) from None
                yield chunk
        finally:
            await stream.aclose()

    def _new_call_id(self) -> str:
        return f"call_{next(self._call_ids)}"


# --- request conversion -----------------------------------------------------------------


def _create_args(request: types.Request) -> dict[str, Any]:
    """Keyword arguments for `client.chat.create(model, ...)`."""
    from xai_sdk.proto import chat_pb2

    args: dict[str, Any] = {"messages": _messages(request.messages)}
    tools = [_tool(t) for t in request.tools] + [_hosted_tool(h) for h in request.hosted]
    if tools:
        args["tools"] = tools
    if request.json_schema is not None:
        args["response_format"] = chat_pb2.ResponseFormat(
            format_type=chat_pb2.FORMAT_TYPE_JSON_SCHEMA, schema=json.dumps(request.json_schema)
        )
    args.update(common.wire_params(request.params, wires.GROK.params))
    if "reasoning_effort" in args:
        args["reasoning_effort"] = _EFFORT[args["reasoning_effort"]]
    return args


def _messages(messages: Iterable[types.Message]) -> list[chat_pb2.Message]:
    from xai_sdk.proto import chat_pb2

    roles = {
        "system": chat_pb2.ROLE_SYSTEM,
        "user": chat_pb2.ROLE_USER,
        "assistant": chat_pb2.ROLE_ASSISTANT,
        "tool": chat_pb2.ROLE_TOOL,
    }
    out = []
    for message in messages:
        content = [chat_pb2.Content(text=message.content)]
        content += [_image(a) for a in message.attachments]
        proto = chat_pb2.Message(role=roles[message.role], content=content)
        if message.tool_call_id is not None:
            proto.tool_call_id = message.tool_call_id
        for call in message.tool_calls:
            proto.tool_calls.append(
                chat_pb2.ToolCall(
                    id=call.id,
                    type=chat_pb2.TOOL_CALL_TYPE_CLIENT_SIDE_TOOL,
                    function=chat_pb2.FunctionCall(name=call.name, arguments=call.arguments),
                )
            )
        out.append(proto)
    return out


def _image(attachment: types.Attachment) -> chat_pb2.Content:
    """An image as xAI takes it: `image_url` content with a data URL."""
    from xai_sdk.proto import chat_pb2, image_pb2

    from massgen.backends.media import data_url

    url = image_pb2.ImageUrlContent(image_url=data_url(attachment), detail=image_pb2.DETAIL_AUTO)
    return chat_pb2.Content(image_url=url)


def _tool(spec: types.ToolSpec) -> chat_pb2.Tool:
    from xai_sdk.chat import tool

    return tool(spec.name, spec.description, spec.parameters)


def _hosted_tool(tool: types.HostedTool) -> chat_pb2.Tool:
    """xAI's server-side tool for one of `wires.GROK.hosted`."""
    from xai_sdk import tools

    made: dict[types.HostedTool, Callable[[], chat_pb2.Tool]] = {
        "web_search": tools.web_search,
        "x_search": tools.x_search,
        "code_execution": tools.code_execution,
    }
    return made[tool]()


# --- stream normalisation ---------------------------------------------------------------


class _StreamState(common.StreamState):
    """What one streamed answer has said so far."""

    shape_errors = ()  # the SDK's chunks are typed protobuf messages

    def __init__(self, provider: str, new_id: Callable[[], str]) -> None:
        super().__init__(provider)
        self._new_id = new_id
        self._calls: dict[str, types.ToolCall] = {}
        # Server-side tool uses, reported at the end: xAI gives one list of citations for
        # the whole answer, not per search, and a run's output arrives after its call.
        self._hosted: list[types.HostedActivity] = []
        self._outputs: list[str] = []  # tool outputs, in the order of the code runs
        self._cited: list[str] = []
        self._wrote = False  # whether the answer has text for its sources to follow

    def _feed(self, chunk: Any) -> list[types.BackendEvent]:
        """Events for one `xai_sdk.chat.Chunk` (its assistant outputs at index 0)."""
        from xai_sdk.proto import chat_pb2, sample_pb2

        if chunk.proto.HasField("usage"):
            self._usage = chunk.proto.usage  # a running total: the last one counts
        self._cited.extend(chunk.citations)
        self._outputs.extend(o.content for o in chunk.tool_outputs if o.content)
        events: list[types.BackendEvent] = []
        for choice in chunk.choices:
            if choice.reasoning_content:
                self._output_chars += len(choice.reasoning_content)
                events.append(types.ReasoningChunk(choice.reasoning_content))
            if choice.content:
                self._wrote = True
                self._output_chars += len(choice.content)
                events.append(types.TextChunk(choice.content))
            for call in choice.tool_calls:
                if call.type in (0, chat_pb2.TOOL_CALL_TYPE_CLIENT_SIDE_TOOL):
                    self._add_call(call)
                elif call.type in _SERVER_TOOLS:
                    self._hosted.append(_server_call(call, _SERVER_TOOLS[call.type]))
            if choice.finish_reason:
                self._finish = sample_pb2.FinishReason.Name(choice.finish_reason)
        return events

    def _add_call(self, call: Any) -> None:
        # xAI sends each call whole, in one chunk.
        if not call.function.name:
            raise errors.MalformedResponse("tool call without a name", provider=self._provider)
        call_id = call.id or self._new_id()
        arguments = call.function.arguments or "{}"
        self._output_chars += len(arguments)
        self._calls[call_id] = types.ToolCall(call_id, call.function.name, arguments)

    def _tool_calls(self) -> list[types.ToolCall]:
        return list(self._calls.values())

    def close(self, prompt_chars: int) -> list[types.BackendEvent]:
        """As `StreamState.close`, after the server-side tool uses and the answer's
        `Sources:` list (its citations go with the last search)."""
        events = super().close(prompt_chars)
        outputs = iter(self._outputs)
        citations = Citations()
        for url in dict.fromkeys(self._cited):
            citations.number(types.Source(url))
        uses = [
            dataclasses.replace(use, output=next(outputs, ""))
            if use.tool == "code_execution"
            else use
            for use in self._hosted
        ]
        searches = [i for i, use in enumerate(uses) if use.tool != "code_execution"]
        if searches and citations.sources:
            last = searches[-1]
            uses[last] = dataclasses.replace(uses[last], sources=citations.sources)
        block = citations.block() if self._wrote else ""
        return [*uses, *([types.TextChunk(block)] if block else []), *events]

    def _finish_reason(self, finish: str) -> str:
        return "tool_calls" if self._calls else _FINISH.get(finish, finish.lower())

    def _counted(self, raw: Any) -> types.Usage:
        # xAI counts reasoning apart from completion (total = prompt + completion +
        # reasoning); our output_tokens include reasoning, as OpenAI's do.
        return types.Usage(
            input_tokens=raw.prompt_tokens,
            output_tokens=raw.completion_tokens + raw.reasoning_tokens,
            reasoning_tokens=raw.reasoning_tokens,
            cached_input_tokens=raw.cached_prompt_text_tokens,
        )


def _server_call(call: Any, tool: types.HostedTool) -> types.HostedActivity:
    """A server-side tool call (whole, in one chunk): its query or its code."""
    try:
        arguments = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    failed = 3  # chat_pb2.TOOL_CALL_STATUS_FAILED
    ok = not call.error_message and call.status != failed
    call_id = call.id or f"{tool}_{call.function.name}"
    if tool == "code_execution":
        code = str(arguments.get("code", "") or call.function.arguments)
        return types.HostedActivity(call_id, tool, code=code, ok=ok)
    query = str(arguments.get("query", "") or arguments.get("url", "") or call.function.name)
    return types.HostedActivity(call_id, tool, query=query, ok=ok)


# --- errors -----------------------------------------------------------------------------


def _rpc_error(exc: grpc.aio.AioRpcError, provider: str) -> errors.BackendError:
    import grpc

    code = exc.code()
    message = exc.details() or code.name
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return errors.AuthFailed(message, provider=provider, status=None)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" not in message:
        wait = _retry_delay(exc.trailing_metadata() or ())
        return errors.RateLimited(message, provider=provider, status=None, retry_after=wait)
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE):
        if _CONTEXT_WORDING.search(message):
            return errors.ContextTooLong(message, provider=provider, status=None)
        return errors.BadRequest(message, provider=provider, status=None)
    if code == grpc.StatusCode.INTERNAL and "deserializ" in message.lower():
        return errors.MalformedResponse(message, provider=provider, status=None)
    if code.name in _UNAVAILABLE:
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            message = f"timed out: {message}"
        return errors.ProviderUnavailable(message, provider=provider, status=None)
    return errors.BadRequest(message, provider=provider, status=None)


def _retry_delay(metadata: Iterable[tuple[str, Any]]) -> float | None:
    """Seconds from a google.rpc.RetryInfo in the rich status, else a retry-after entry."""
    from google.rpc import error_details_pb2, status_pb2

    fallback = None
    for key, value in metadata:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info = error_details_pb2.RetryInfo()
                    detail.Unpack(info)
                    return info.retry_delay.ToTimedelta().total_seconds()
        elif key == "retry-after":
            fallback = parse_retry_after(str(value))
    return fallback


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> GrokBackend:
    """The entry point of `wires.GROK`."""
    return GrokBackend(common.endpoint_for(cfg, profile, api_key))
