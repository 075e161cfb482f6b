"""The contract every SDK wire keeps, run against each loopback fake through the real SDK:
streaming, tool calls, faults and retries, key scrubbing, early stop, the registry's
defaults, parameters, a team run. What only one wire does is tested in its own module.

Each wire is described once, as a `WireFake`: how to start its fake, build its backend,
and read what it sent. A new wire gets the whole contract by adding one.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from backend_support import ask, collect, text_of

import massgen
from massgen.backends import registry, wires
from massgen.backends.anthropic_messages import AnthropicBackend
from massgen.backends.chat_completions import ChatCompletionsBackend
from massgen.backends.common import Endpoint
from massgen.backends.gemini import GeminiBackend
from massgen.backends.grok import GrokBackend
from massgen.backends.profiles import PROFILES
from massgen.backends.responses import ResponsesBackend
from massgen.backends.wires import Wire
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.testing import FakeProvider, FakeUsage, Fault, Reply, Scripted
from massgen.testing import fake_gemini as fg
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_gemini import FakeGemini, google_fault
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.fake_xai import FakeXai
from massgen.testing.http_fake import stream_error

Faults = tuple[tuple[Fault, type, int | None], ...]


def _bearer(fake: Any, n: int) -> str:
    scheme, _, key = fake.headers[n]["authorization"].partition(" ")
    assert scheme == "Bearer"
    return key


def _temperature(body: dict[str, Any]) -> Any:
    return body.get("temperature")


def _stream_error(message: str, at_chunk: int) -> Fault:
    return stream_error(message, "server_error", at_chunk=at_chunk)


def _google_error(status: int) -> Callable[[str, int], Fault]:
    def fault(message: str, at_chunk: int) -> Fault:
        sent = google_fault(status, message)
        return Fault(sent.status, sent.body, at_chunk=at_chunk)

    return fault


# What a second request carried after a tool turn, read from the provider's own shape:
# ([(call id, tool name, arguments)], [(call id, result text)], [tool names offered]).
ToolTurn = tuple[list[tuple[str, str, Any]], list[tuple[str, str]], list[str]]


def _chat_tool_turn(body: dict[str, Any]) -> ToolTurn:
    # The assistant message carries `tool_calls`; each result is a `role: tool` message.
    assistant = next(m for m in body["messages"] if m.get("tool_calls"))
    calls = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in assistant["tool_calls"]
    ]
    results = [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    return calls, results, [t["function"]["name"] for t in body["tools"]]


def _responses_tool_turn(body: dict[str, Any]) -> ToolTurn:
    # `function_call` and `function_call_output` input items, matched by `call_id`.
    items = body["input"]
    calls = [
        (i["call_id"], i["name"], json.loads(i["arguments"]))
        for i in items
        if i.get("type") == "function_call"
    ]
    results = [
        (i["call_id"], i["output"]) for i in items if i.get("type") == "function_call_output"
    ]
    return calls, results, [t["name"] for t in body["tools"]]


def _anthropic_tool_turn(body: dict[str, Any]) -> ToolTurn:
    # `tool_use` blocks in the assistant turn, `tool_result` blocks in the next user turn.
    messages = body["messages"]
    turn = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    calls = [
        (b["id"], b["name"], b["input"])
        for b in messages[turn]["content"]
        if b["type"] == "tool_use"
    ]
    reply = messages[turn + 1]
    assert reply["role"] == "user"
    results = [(b["tool_use_id"], b["content"]) for b in reply["content"]]
    assert all(b["type"] == "tool_result" for b in reply["content"])
    return calls, results, [t["name"] for t in body["tools"]]


def _gemini_tool_turn(body: dict[str, Any]) -> ToolTurn:
    # `functionCall` parts in the model turn, `functionResponse` parts in the next user turn.
    contents = body["contents"]
    turn = next(i for i, c in enumerate(contents) if c["role"] == "model")
    calls = [
        (p["functionCall"]["id"], p["functionCall"]["name"], p["functionCall"]["args"])
        for p in contents[turn]["parts"]
    ]
    reply = contents[turn + 1]
    assert reply["role"] == "user"
    results = [
        (p["functionResponse"]["id"], p["functionResponse"]["response"]["result"])
        for p in reply["parts"]
    ]
    names = [d["name"] for t in body["tools"] for d in t["functionDeclarations"]]
    return calls, results, names


def _grok_tool_turn(body: dict[str, Any]) -> ToolTurn:
    # Client-side `tool_calls` on the assistant message; each result a `ROLE_TOOL` message.
    messages = body["messages"]
    assistant = next(m for m in messages if m.get("tool_calls"))
    assert {c["type"] for c in assistant["tool_calls"]} == {"TOOL_CALL_TYPE_CLIENT_SIDE_TOOL"}
    calls = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in assistant["tool_calls"]
    ]
    results = [
        (m["tool_call_id"], "".join(part["text"] for part in m["content"]))
        for m in messages
        if m["role"] == "ROLE_TOOL"
    ]
    return calls, results, [t["function"]["name"] for t in body["tools"]]


@dataclass(frozen=True)
class WireFake:
    """One wire format as the contract drives it."""

    type: str  # the config type the registry tests use
    fake: Callable[..., Any]  # `fake(policy)` -> a started-on-enter loopback server
    backend: type
    model: str
    key_names: str  # how a missing key is named, e.g. "GOOGLE_API_KEY or GEMINI_API_KEY"
    faults: Faults  # (fault, our error, its status); status None: the wire has none
    # Chunks sent before a drop or an error that leaves "one two " of "one two three four".
    drop_after_two_words: int
    malformed: Reply
    tool_turn: Callable[[dict[str, Any]], ToolTurn]  # as the fake recorded the body
    # The defaults are the OpenAI-style HTTP wires'.
    key_sent: Callable[[Any, int], str] = _bearer  # the key the fake received with request n
    # As the fake recorded the body.
    temperature_sent: Callable[[dict[str, Any]], Any] = _temperature
    unauthorized: Callable[[str], Fault] = Fault.unauthorized
    # Each retry-after form the wire knows, as `form(seconds)`.
    rate_limits: tuple[Callable[[float], Fault], ...] = (Fault.rate_limited,)
    server_error: Callable[[], Fault] = Fault.server_error
    # An error the provider reports inside the stream, as `fault(message, at_chunk)`.
    stream_fault: Callable[[str, int], Fault] = _stream_error
    call_ids: tuple[str, str] = ("call_fake_0", "call_fake_1")
    drop_wording: str = ""  # what the error for that drop says
    drop_before_text: int = 0  # chunks sent before a drop that leaves no text
    stalled_text: str = ""  # what arrived before a stall at the second chunk
    stall_wording: str = "timed out"  # what the error for that stall says
    refused_wording: str = ""  # the error for a closed port
    exact_messages: bool = True  # False: the provider message ends the error's message
    estimates_usage: bool = True  # False: the wire always reports usage
    # Usage the fake reports with cache reads and reasoning, and what we make of it.
    usage_counted: tuple[FakeUsage, types.Usage] = (
        FakeUsage(prompt_tokens=120, completion_tokens=30, cached_tokens=100, reasoning_tokens=12),
        types.Usage(120, 30, reasoning_tokens=12, cached_input_tokens=100),
    )
    # Each way the fake may carry reasoning, as extra `Reply` fields.
    reasoning_forms: tuple[dict[str, Any], ...] = ({},)

    @property
    def wire(self) -> Wire:
        return PROFILES[self.type].wire

    @property
    def provider(self) -> str:
        return self.type

    @property
    def default_model(self) -> str | None:
        return PROFILES[self.type].default_model


def _anthropic_key(fake: Any, n: int) -> str:
    return fake.headers[n].get("x-api-key") or _bearer(fake, n)


def _http_faults(*extra: tuple[Fault, type, int]) -> Faults:
    return (
        (Fault.unauthorized("Incorrect API key provided: sk-te***"), errors.AuthFailed, 401),
        (Fault.http(403, "Project does not have access to model"), errors.AuthFailed, 403),
        (Fault.rate_limited(message="Slow down, please"), errors.RateLimited, 429),
        (Fault.server_error("Upstream overloaded"), errors.ProviderUnavailable, 500),
        *extra,
    )


CHAT = WireFake(
    type="zai",
    tool_turn=_chat_tool_turn,
    fake=FakeProvider,
    backend=ChatCompletionsBackend,
    model="fake-model",
    key_names="ZAI_API_KEY",
    faults=_http_faults(
        (Fault.http(503, "Service unavailable"), errors.ProviderUnavailable, 503),
        (Fault.context_length_exceeded(), errors.ContextTooLong, 400),
        (
            Fault.http(400, "prompt is too long: 210000 tokens > 200000 maximum"),
            errors.ContextTooLong,
            400,
        ),
        (Fault.http(400, "temperature must be at most 2"), errors.BadRequest, 400),
        (Fault.http(404, "The model `nope` does not exist"), errors.BadRequest, 404),
    ),
    drop_after_two_words=3,
    malformed=Reply(text="x", fault=Fault(malformed_chunk=True)),
    stalled_text="slow ",
    # Providers name the extra field either way.
    reasoning_forms=({"reasoning_field": "reasoning_content"}, {"reasoning_field": "reasoning"}),
)
RESPONSES = WireFake(
    type="openai",
    tool_turn=_responses_tool_turn,
    fake=FakeResponses,
    backend=ResponsesBackend,
    model="gpt-5",
    key_names="OPENAI_API_KEY",
    faults=_http_faults(
        (Fault.http(503, "Service unavailable"), errors.ProviderUnavailable, 503),
        (Fault.context_length_exceeded(), errors.ContextTooLong, 400),
        (Fault.http(400, "Unsupported parameter: 'temperature'"), errors.BadRequest, 400),
    ),
    drop_after_two_words=6,
    drop_before_text=1,
    malformed=Reply(text="hello there", fault=Fault(malformed_chunk=True, at_chunk=2)),
)
ANTHROPIC = WireFake(
    type="claude",
    tool_turn=_anthropic_tool_turn,
    fake=FakeAnthropic,
    backend=AnthropicBackend,
    model="claude-sonnet-4-6",
    key_names="ANTHROPIC_API_KEY",
    key_sent=_anthropic_key,
    faults=_http_faults(
        (Fault.http(529, "Overloaded"), errors.ProviderUnavailable, 529),
        (Fault.http(400, "max_tokens: must be at most 64000"), errors.BadRequest, 400),
        (Fault.http(404, "model: claude-nope"), errors.BadRequest, 404),
    ),
    call_ids=("toolu_fake_0", "toolu_fake_1"),
    drop_after_two_words=5,
    drop_wording="interrupted",
    stream_fault=lambda message, at_chunk: stream_error(
        message, "overloaded_error", at_chunk=at_chunk
    ),
    malformed=Reply(text="hello there", fault=Fault(malformed_chunk=True, at_chunk=2)),
    stall_wording="",
    estimates_usage=False,  # message_start carries the counts
    # Anthropic counts cache reads apart from input_tokens; we add them back in. It
    # reports no reasoning count.
    usage_counted=(
        FakeUsage(prompt_tokens=1200, completion_tokens=30, cached_tokens=1000),
        types.Usage(input_tokens=1200, output_tokens=30, cached_input_tokens=1000),
    ),
)
GEMINI = WireFake(
    type="gemini",
    tool_turn=_gemini_tool_turn,
    fake=FakeGemini,
    backend=GeminiBackend,
    model="gemini-2.5-flash",
    key_names="GOOGLE_API_KEY or GEMINI_API_KEY",
    key_sent=lambda fake, n: fake.headers[n]["x-goog-api-key"],
    temperature_sent=lambda body: body.get("generationConfig", {}).get("temperature"),
    unauthorized=fg.invalid_api_key,
    rate_limits=(lambda seconds: fg.rate_limited(retry_delay=seconds),),
    server_error=fg.server_error,
    stream_fault=_google_error(503),
    faults=(
        (fg.invalid_api_key(), errors.AuthFailed, 400),
        (
            fg.google_fault(401, "Request had invalid authentication credentials."),
            errors.AuthFailed,
            401,
        ),
        (fg.permission_denied(), errors.AuthFailed, 403),
        (fg.rate_limited(message="Quota exceeded for metric"), errors.RateLimited, 429),
        (fg.server_error(), errors.ProviderUnavailable, 500),
        (fg.unavailable(), errors.ProviderUnavailable, 503),
        (
            fg.google_fault(504, "Deadline expired before operation could complete."),
            errors.ProviderUnavailable,
            504,
        ),
        (fg.context_too_long(), errors.ContextTooLong, 400),
        (
            fg.google_fault(400, "* GenerateContentRequest.contents: contents is not specified"),
            errors.BadRequest,
            400,
        ),
        (
            fg.google_fault(404, "models/nope is not found for API version v1beta"),
            errors.BadRequest,
            404,
        ),
    ),
    call_ids=("call_1", "call_2"),
    drop_after_two_words=2,
    drop_wording="dropped",
    malformed=Reply(text="x", fault=Fault(malformed_chunk=True)),
    stalled_text="slow words ",
    refused_wording="connection error",
)
GROK = WireFake(
    type="grok",
    tool_turn=_grok_tool_turn,
    fake=FakeXai,
    backend=GrokBackend,
    model="grok-4",
    key_names="XAI_API_KEY",
    key_sent=lambda fake, n: fake.metadata[n]["authorization"].partition("Bearer ")[2],
    # A google.rpc.RetryInfo in the rich status, and a retry-after entry.
    rate_limits=(
        lambda seconds: google_fault(429, "slow down", retry_delay=seconds),
        Fault.rate_limited,
    ),
    server_error=lambda: google_fault(503, "busy"),
    stream_fault=_google_error(500),
    faults=(
        (Fault.unauthorized("Incorrect API key provided: xa***"), errors.AuthFailed, None),
        (
            google_fault(403, "The caller does not have permission to use model grok-9"),
            errors.AuthFailed,
            None,
        ),
        (Fault.rate_limited(message="Too many requests"), errors.RateLimited, None),
        (google_fault(500, "Internal error while sampling"), errors.ProviderUnavailable, None),
        (google_fault(503, "Service temporarily unavailable"), errors.ProviderUnavailable, None),
        (google_fault(504, "Deadline exceeded"), errors.ProviderUnavailable, None),
        (
            google_fault(
                400,
                "This model's maximum prompt length is 131072 but the request "
                "contains 140000 tokens.",
            ),
            errors.ContextTooLong,
            None,
        ),
        (google_fault(400, "temperature must be at most 2"), errors.BadRequest, None),
        (google_fault(404, "The model grok-9 does not exist"), errors.BadRequest, None),
    ),
    drop_after_two_words=2,
    drop_wording="reset",
    malformed=Reply(text="x y", fault=Fault(malformed_chunk=True, at_chunk=1)),
    stalled_text="slow words ",
    exact_messages=False,  # a gRPC status carries the provider's message after its own
)
WIRE_FAKES = (CHAT, RESPONSES, ANTHROPIC, GEMINI, GROK)
KEY = "sk-contract-key-123"
TOOL = types.ToolSpec("vote", "Vote for an answer.", {"type": "object", "properties": {}})


@pytest.fixture(params=WIRE_FAKES, ids=lambda w: w.wire.name)
def wire(request: pytest.FixtureRequest) -> WireFake:
    return request.param


@pytest.fixture
def make(wire: WireFake, backends):
    """`make(fake, **changes)`: the wire's backend against `fake` (see conftest)."""
    return backends(wire.backend, provider=wire.provider, model=wire.model, api_key=KEY)


def _fault_cases() -> list[Any]:
    return [
        pytest.param(w, fault, error, status, id=f"{w.wire.name}-{error.__name__}-{i}")
        for w in WIRE_FAKES
        for i, (fault, error, status) in enumerate(w.faults)
    ]


# --- streaming --------------------------------------------------------------------------


async def test_streams_text_word_by_word_then_usage_and_finish(wire, make):
    with wire.fake(Scripted([Reply(text="The answer is 42.")])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert [e for e in events if isinstance(e, types.TextChunk)] == [
        types.TextChunk("The "),
        types.TextChunk("answer "),
        types.TextChunk("is "),
        types.TextChunk("42."),
    ]
    assert isinstance(events[-2], types.Usage) and not events[-2].estimated
    assert events[-1] == types.Finish("stop")


async def test_reasoning_comes_before_the_text_and_usage_counts_cache_and_reasoning(wire, make):
    # Gemini and xAI report reasoning apart from the output; our output counts both.
    sent, counted = wire.usage_counted
    for form in wire.reasoning_forms:
        reply = Reply(text="The answer is 42.", reasoning="six times seven", usage=sent, **form)
        with wire.fake(Scripted([reply])) as fake:
            events = await collect(make(fake).stream(ask()))
        assert events == [
            types.ReasoningChunk("six "),
            types.ReasoningChunk("times "),
            types.ReasoningChunk("seven"),
            types.TextChunk("The "),
            types.TextChunk("answer "),
            types.TextChunk("is "),
            types.TextChunk("42."),
            counted,
            types.Finish("stop"),
        ], form


async def test_a_length_stop_is_a_length_finish(wire, make):
    with wire.fake(Scripted([Reply(text="cut", finish_reason="length")])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events[-1] == types.Finish("length")


async def test_tool_calls_come_whole_with_json_arguments(wire, make):
    calls = [
        ("new_answer", {"content": 'A long answer with "quotes" and unicode: é'}),
        ("vote", {"agent_id": "agent2.1", "reason": "best"}),
    ]
    with wire.fake(Scripted([Reply(tool_calls=calls)])) as fake:
        events = await collect(make(fake).stream(ask(tools=(TOOL,))))
    tool_calls = [e for e in events if isinstance(e, types.ToolCall)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in tool_calls] == [
        (wire.call_ids[0], *calls[0]),
        (wire.call_ids[1], *calls[1]),
    ]
    assert events[-1] == types.Finish("tool_calls")


LOOKUP = types.ToolSpec(
    "lookup",
    "Look a city up.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def test_a_tool_round_trip_in_the_providers_own_shape(wire, make):
    # Two calls of a non-workflow tool in one turn (every wire here takes parallel calls);
    # the fakes of Chat Completions, Responses and Anthropic stream the arguments in
    # fragments, which must come back as one ToolCall each.
    scripted = [("lookup", {"city": "Tokyo"}), ("lookup", {"city": 'Paris, "FR"'})]
    question = types.Message("user", "Where is it sunny?")
    with wire.fake(Scripted([Reply(tool_calls=scripted), Reply(text="Tokyo.")])) as fake:
        backend = make(fake)
        first = await collect(backend.stream(types.Request((question,), tools=(LOOKUP,))))
        calls = tuple(e for e in first if isinstance(e, types.ToolCall))
        results = tuple(
            types.Message("tool", f"{name}: sunny" if i == 0 else "rain", tool_call_id=c.id)
            for i, (c, (name, _)) in enumerate(zip(calls, scripted, strict=True))
        )
        history = (question, types.Message("assistant", "", tool_calls=calls), *results)
        second = await collect(backend.stream(types.Request(history, tools=(LOOKUP,))))
        sent_calls, sent_results, offered = wire.tool_turn(fake.requests[1])
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        (wire.call_ids[0], *scripted[0]),
        (wire.call_ids[1], *scripted[1]),
    ]
    assert first[-1] == types.Finish("tool_calls")
    assert sent_calls == [(wire.call_ids[0], *scripted[0]), (wire.call_ids[1], *scripted[1])]
    assert sent_results == [(wire.call_ids[0], "lookup: sunny"), (wire.call_ids[1], "rain")]
    assert offered == ["lookup"]
    assert text_of(second) == "Tokyo." and second[-1] == types.Finish("stop")


async def test_usage_is_estimated_when_the_server_sends_none(wire, make):
    if not wire.estimates_usage:
        pytest.skip(f"{wire.wire.name} always counts tokens in its first event")
    with wire.fake(Scripted([Reply(text="y" * 40, usage=None)])) as fake:
        events = await collect(make(fake).stream(ask("x" * 400)))
    assert types.Usage(input_tokens=100, output_tokens=10, estimated=True) in events


async def test_sends_the_key_and_names_itself(wire, make):
    with wire.fake(Scripted([Reply(text="ok")])) as fake:
        backend = make(fake, model="other-model")
        await collect(backend.stream(ask()))
        assert wire.key_sent(fake, 0) == KEY
    assert backend.name == f"{wire.provider}:other-model"


async def test_stopping_early_leaves_the_backend_usable(wire, make):
    with wire.fake(Scripted([Reply(text="a b c d"), Reply(text="again")])) as fake:
        backend = make(fake)
        stream = backend.stream(ask())
        async for _event in stream:
            break
        await stream.aclose()
        assert text_of(await collect(backend.stream(ask()))) == "again"


# --- faults and retries -----------------------------------------------------------------


@pytest.mark.parametrize(("wire", "fault", "error_type", "status"), _fault_cases())
async def test_faults_map_to_our_errors_with_the_provider_message(
    wire, fault, error_type, status, backends
):
    make = backends(wire.backend, provider=wire.provider, model=wire.model, api_key=KEY)
    with wire.fake(Scripted([Reply(fault=fault)])) as fake, pytest.raises(error_type) as raised:
        await collect(make(fake).stream(ask()))
    error, sent = raised.value, fault.body["error"]["message"]
    assert type(error) is error_type
    assert error.status == status
    assert error.message == sent if wire.exact_messages else error.message.endswith(sent)
    assert error.provider == f"{wire.provider}:{wire.model}"


async def test_the_api_key_never_appears_in_errors(wire, make):
    key = "sk-live-very-secret-123"
    fault = wire.unauthorized(f"Incorrect API key provided: {key}.")
    with (
        wire.fake(Scripted([Reply(fault=fault)])) as fake,
        pytest.raises(errors.AuthFailed) as raised,
    ):
        await collect(make(fake, api_key=key).stream(ask()))
    assert key not in str(raised.value) and key not in repr(raised.value.args)
    assert "***" in str(raised.value) and "***" in raised.value.message


async def test_rate_limited_twice_then_succeeds_after_honouring_retry_after(wire, make, sleep):
    forms = wire.rate_limits
    faults = [forms[0](2), forms[-1](0.5)]
    with wire.fake(Scripted([*(Reply(fault=f) for f in faults), Reply(text="ok")])) as fake:
        events = await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 3
    assert text_of(events) == "ok"
    assert sleep.delays == [2.0, 0.5]


async def test_server_errors_back_off_with_jitter_then_give_up(wire, make, sleep):
    with wire.fake(Scripted([Reply(fault=wire.server_error()) for _ in range(3)])) as fake:
        with pytest.raises(errors.ProviderUnavailable):
            await collect(make(fake, max_retries=2).stream(ask()))
        assert len(fake.requests) == 3
    assert sleep.delays == [0.5, 1.0]  # rand() = 0.5 of 1 s, then of 2 s


async def test_auth_failure_is_not_retried(wire, make, sleep):
    replies = [Reply(fault=wire.unauthorized("bad key")), Reply(text="ok")]
    with wire.fake(Scripted(replies)) as fake:
        with pytest.raises(errors.AuthFailed):
            await collect(make(fake, max_retries=3).stream(ask()))
        assert len(fake.requests) == 1
    assert sleep.delays == []


async def test_a_drop_after_text_is_raised_and_the_text_never_repeats(wire, make, sleep):
    dropped = Reply(
        text="one two three four", fault=Fault(drop_after_chunks=wire.drop_after_two_words)
    )
    with wire.fake(Scripted([dropped, Reply(text="one two three four")])) as fake:
        seen = []
        with pytest.raises(errors.ProviderUnavailable, match=wire.drop_wording):
            async for event in make(fake, max_retries=3).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "one two "  # the words sent before the drop, once
    assert sleep.delays == []


async def test_an_error_inside_the_stream_is_raised_after_the_text(wire, make):
    fault = wire.stream_fault("The model crashed mid-way", wire.drop_after_two_words)
    with wire.fake(Scripted([Reply(text="one two three four", fault=fault)])) as fake:
        seen = []
        with pytest.raises(errors.ProviderUnavailable, match="The model crashed mid-way"):
            async for event in make(fake, max_retries=2).stream(ask()):
                seen.append(event)
        assert len(fake.requests) == 1
    assert text_of(seen) == "one two "


async def test_a_drop_before_any_text_is_retried(wire, make, sleep):
    lost = Reply(text="lost", fault=Fault(drop_after_chunks=wire.drop_before_text))
    with wire.fake(Scripted([lost, Reply(text="kept")])) as fake:
        events = await collect(make(fake, max_retries=1).stream(ask()))
    assert text_of(events) == "kept" and len(sleep.delays) == 1


async def test_a_stream_without_its_end_ended_early(wire, make):
    cut = Reply(text="half an", finish_reason=None)
    with (
        wire.fake(Scripted([cut])) as fake,
        pytest.raises(errors.ProviderUnavailable, match="ended early"),
    ):
        await collect(make(fake).stream(ask()))


async def test_a_malformed_chunk_is_a_malformed_response(wire, make):
    with wire.fake(Scripted([wire.malformed])) as fake, pytest.raises(errors.MalformedResponse):
        await collect(make(fake).stream(ask()))


async def test_a_stalled_stream_fails_at_the_read_timeout(wire, make):
    stalled = Reply(text="slow words here", fault=Fault(stall_seconds=10, at_chunk=2))
    with wire.fake(Scripted([stalled])) as fake:
        started = time.monotonic()
        seen = []
        backend = make(fake, timeout=0.3)
        with pytest.raises(errors.ProviderUnavailable, match=wire.stall_wording):
            async for event in backend.stream(ask()):
                seen.append(event)
        await backend.aclose()  # before the server goes: no GOAWAY noise in the log
    assert time.monotonic() - started < 5
    assert text_of(seen) == wire.stalled_text


async def test_a_closed_port_is_provider_unavailable(wire):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}" + ("/v1" if wire is CHAT or wire is RESPONSES else "")
    backend = wire.backend(Endpoint(wire.provider, "m", "k", base_url))
    try:
        with pytest.raises(errors.ProviderUnavailable, match=wire.refused_wording):
            await collect(backend.stream(ask()))
    finally:
        await backend.aclose()


# --- parameters -------------------------------------------------------------------------

# A value for each typed parameter that every config accepts.
PARAM_VALUES: dict[str, Any] = {
    "temperature": 0.5,
    "top_p": 0.5,
    "max_tokens": 77,
    "seed": 7,
    "stop": ("END",),
    "presence_penalty": 0.5,
    "frequency_penalty": 0.5,
    "reasoning_effort": "high",
    "reasoning_summary": "auto",
    "thinking_budget": 2048,
    "verbosity": "low",
}


def test_every_typed_parameter_has_a_test_value_and_a_config_field():
    assert set(PARAM_VALUES) == set(types.TYPED_PARAMS)
    assert set(types.TYPED_PARAMS) <= set(BackendConfig.model_fields)


@pytest.mark.parametrize("wire_record", wires.WIRES, ids=lambda w: w.name)
def test_a_wire_refuses_the_parameters_it_does_not_accept(wire_record):
    # A profile of this wire whose config is complete without the parameter.
    complete = [
        p.name
        for p in PROFILES.values()
        if p.wire is wire_record and registry.check(BackendConfig(type=p.name)) is None
    ]
    if not complete:
        pytest.skip(f"{wire_record.name} cannot run here (the local model is not installed)")
    for name in sorted(set(types.TYPED_PARAMS).difference(wire_record.params)):
        config = BackendConfig(type=complete[0], **{name: PARAM_VALUES[name]})
        key, message, fix = registry.check(config)
        assert key == name
        assert f"not a parameter of backend type {complete[0]!r}" in message
        assert "extra_body" in fix


async def test_every_parameter_a_wire_accepts_reaches_the_wire(wire, make):
    assert set(wire.wire.params) <= set(types.TYPED_PARAMS)
    with wire.fake() as fake:
        backend = make(fake)
        await collect(backend.stream(ask()))
        for name in sorted(wire.wire.params):
            config = BackendConfig(type=wire.type, model="m", **{name: PARAM_VALUES[name]})
            assert registry.check(config) is None, name
            await collect(
                backend.stream(ask(params=types.GenerationParams(**{name: PARAM_VALUES[name]})))
            )
        plain, *with_one = fake.requests
    for name, body in zip(sorted(wire.wire.params), with_one, strict=True):
        assert body != plain, f"{name} did not change what {wire.wire.name} sent"


# --- the registry, a preset and a team --------------------------------------------------


async def test_the_registry_builds_it_with_the_profile_defaults_and_the_env_key(wire):
    assert registry.create(BackendConfig(type=wire.type), env={wire.key_names.split()[-1]: "k"})
    with wire.fake(Scripted([Reply(text="ok")])) as fake:
        cfg = BackendConfig(type=wire.type, base_url=fake.base_url, max_retries=0)
        backend = registry.create(cfg, env={wire.key_names.split()[0]: "sk-env"})
        try:
            assert isinstance(backend, wire.backend)
            assert backend.name == f"{wire.type}:{wire.default_model}"
            await collect(backend.stream(ask()))
        finally:
            await backend.aclose()
        assert wire.key_sent(fake, 0) == "sk-env"
        assert fake.requests[0]["model"] == wire.default_model


def test_a_missing_key_names_the_variable_and_where_to_put_it(wire):
    with pytest.raises(errors.ConfigError) as raised:
        registry.create(BackendConfig(type=wire.type), env={})
    for text in (str(raised.value), raised.value.render()):
        for part in (wire.key_names, ".env", "~/.config/massgen/.env", "massgen --setup"):
            assert part in text


def test_the_shipped_preset_uses_this_type(wire):
    from massgen.config import load_config, resolve_config_arg

    config = load_config(resolve_config_arg(f"@examples/providers/{wire.type}"))
    assert registry.check(config.agents[0].backend) is None
    assert config.agents[0].backend.type == wire.type


def test_a_team_answers_votes_presents_and_sends_the_config_temperature(wire, in_tmp):
    with wire.fake() as fake:
        backend = {"type": wire.type, "base_url": fake.base_url, "api_key": "k", "temperature": 0.3}
        agents = [
            {"id": f"a{i}", "backend": {**backend, "model": f"{wire.type}-fake-{i}"}}
            for i in range(3)
        ]
        result = massgen.run("What is 2+2?", config={"agents": agents}, logs=False)
        assert {r["model"] for r in fake.requests} == {f"{wire.type}-fake-{i}" for i in range(3)}
        assert {wire.temperature_sent(r) for r in fake.requests} == {0.3}
    assert result.ok
    assert result.answer.startswith(f"Final answer from {wire.type}-fake-")
    assert len(result.votes) == 3 and all(v.target == result.winner for v in result.votes)
    assert result.total_usage.input_tokens > 0
