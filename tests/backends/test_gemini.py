"""GeminiBackend driven through the real google-genai SDK against the loopback FakeGemini."""

import pytest
from backend_support import ask, collect, first_request

from massgen.backends.gemini import GeminiBackend
from massgen.core import errors, types
from massgen.testing import Reply, Scripted
from massgen.testing import fake_gemini as fg
from massgen.testing.fake_gemini import FakeGemini


@pytest.fixture
def make(backends):
    """Build GeminiBackends against a FakeGemini."""
    return backends(
        GeminiBackend, provider="gemini", model="gemini-2.5-flash", api_key="AIza-test-key"
    )


# --- streaming --------------------------------------------------------------------------


async def test_tool_results_go_back_as_function_responses_with_the_thought_signature(make):
    tool = types.ToolSpec("add", "Add numbers.", {"type": "object", "properties": {}})
    replies = [Reply(tool_calls=[("add", {"a": 2, "b": 3})]), Reply(text="5")]
    with FakeGemini(Scripted(replies)) as fake:
        backend = make(fake)
        first = types.Request(messages=(types.Message("user", "Add 2 and 3."),), tools=(tool,))
        (call,) = [e for e in await collect(backend.stream(first)) if isinstance(e, types.ToolCall)]
        history = (
            *first.messages,
            types.Message("assistant", "", tool_calls=(call,)),
            types.Message("tool", "5", tool_call_id=call.id),
        )
        await collect(backend.stream(types.Request(messages=history, tools=(tool,))))
        contents = fake.requests[1]["contents"]
    assert contents[1:] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"id": call.id, "name": "add", "args": {"a": 2, "b": 3}},
                    "thoughtSignature": fg.THOUGHT_SIGNATURE,
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": call.id, "name": "add", "response": {"result": "5"}}}
            ],
        },
    ]


# "length" is in the wire contract.
@pytest.mark.parametrize(("finish", "ours"), [("SAFETY", "content_filter"), ("OTHER", "other")])
async def test_finish_reasons_are_normalised(make, finish, ours):
    with FakeGemini(Scripted([Reply(text="cut", finish_reason=finish)])) as fake:
        events = await collect(make(fake).stream(ask()))
    assert events[-1] == types.Finish(ours)


# --- what is sent -----------------------------------------------------------------------


async def test_request_uses_typed_params_system_instruction_and_json_schema_tools(make):
    history = (types.Message("system", "Be brief."), types.Message("user", "Add 2 and 3."))
    parameters = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": False,
    }
    tool = types.ToolSpec("add", "Add numbers.", parameters)
    params = types.GenerationParams(
        temperature=0.2, top_p=0.9, stop=("END",), seed=7, max_tokens=64
    )
    request = types.Request(messages=history, tools=(tool,), params=params)
    body = await first_request(FakeGemini, make, request, reply="5")
    assert body["model"] == "gemini-2.5-flash"
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Add 2 and 3."}]}]
    (declaration,) = body["tools"][0]["functionDeclarations"]
    assert declaration == {
        "name": "add",
        "description": "Add numbers.",
        "parameters_json_schema": parameters,
    }
    config = body["generationConfig"]
    assert {k: v for k, v in config.items() if k != "thinkingConfig"} == {
        "temperature": 0.2,
        "topP": 0.9,
        "maxOutputTokens": 64,
        "stopSequences": ["END"],
        "seed": 7,
    }


async def test_extra_body_is_merged_into_the_request(make):
    extra = {"generationConfig": {"topK": 5}, "safetySettings": []}
    params = types.GenerationParams(extra_body=extra)
    body = await first_request(FakeGemini, make, ask(params=params))
    assert body["generationConfig"]["topK"] == 5 and body["safetySettings"] == []


@pytest.mark.parametrize(
    ("model", "effort", "thinking"),
    [
        ("gemini-2.5-pro", "low", {"include_thoughts": True, "thinking_budget": 1024}),
        ("gemini-3-pro-preview", "high", {"include_thoughts": True, "thinking_level": "HIGH"}),
        ("gemini-2.0-flash", "high", None),
        ("gemini-2.5-flash", None, {"include_thoughts": True}),  # thoughts by default
    ],
)
async def test_reasoning_effort_becomes_a_thinking_budget_or_level(make, model, effort, thinking):
    params = types.GenerationParams(reasoning_effort=effort)
    body = await first_request(FakeGemini, make, ask(params=params), model=model)
    assert body.get("generationConfig", {}).get("thinkingConfig") == thinking


async def test_a_thinking_budget_wins_over_the_effort(make):
    params = types.GenerationParams(reasoning_effort="low", thinking_budget=4096)
    body = await first_request(FakeGemini, make, ask(params=params))
    assert body["generationConfig"]["thinkingConfig"] == {
        "include_thoughts": True,
        "thinking_budget": 4096,
    }


async def test_json_schema_becomes_a_response_json_schema(make):
    schema = {"title": "Workflow action", "type": "object", "properties": {}}
    body = await first_request(FakeGemini, make, ask(json_schema=schema), reply="{}")
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema


async def test_sends_the_key_as_x_goog_api_key_and_names_itself(make):
    with FakeGemini(Scripted([Reply(text="ok")])) as fake:
        backend = make(fake, model="gemini-2.5-pro")
        await collect(backend.stream(ask()))
        assert fake.headers[0]["x-goog-api-key"] == "AIza-test-key"
        assert fake.headers[0]["x-server-timeout"] == "1620"  # not the per-read timeout
    assert backend.name == "gemini:gemini-2.5-pro"


# --- faults -----------------------------------------------------------------------------


async def test_a_retry_after_header_counts_too_and_is_capped(make, sleep):
    replies = [
        Reply(fault=fg.google_fault(429, "slow down", headers={"retry-after": "3"})),
        Reply(fault=fg.rate_limited(retry_delay=3600)),
        Reply(text="ok"),
    ]
    with FakeGemini(Scripted(replies)) as fake:
        await collect(make(fake, max_retries=2).stream(ask()))
    assert sleep.delays == [3.0, 60.0]


async def test_malformed_function_call_finish_is_a_malformed_response(make):
    broken = Reply(finish_reason="MALFORMED_FUNCTION_CALL")
    with FakeGemini(Scripted([broken])) as fake, pytest.raises(errors.MalformedResponse):
        await collect(make(fake).stream(ask()))
