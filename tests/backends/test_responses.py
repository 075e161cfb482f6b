"""ResponsesBackend (types openai, azure_openai) through the real openai SDK against the
loopback Responses fake: what is sent, a failure inside the stream, Azure. The contract
every wire keeps (reasoning summaries, usage, finishes, faults) is in test_wire_contract.py."""

import pytest
from backend_support import ADD, ADD_TURN, ask, collect, first_request, text_of

from massgen.backends import registry
from massgen.backends.responses import ResponsesBackend
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.testing import Reply, Scripted
from massgen.testing.fake_openai_responses import FakeResponses

KEY = "sk-test-key-123"


@pytest.fixture
def make(backends):
    """Build ResponsesBackends against a FakeResponses."""
    return backends(ResponsesBackend, provider="openai", model="gpt-5", api_key=KEY)


# --- what is sent -----------------------------------------------------------------------


async def test_payload_uses_input_items_instructions_and_typed_params(make):
    history, tool = ADD_TURN, ADD
    params = types.GenerationParams(
        temperature=0.2,
        reasoning_effort="low",
        reasoning_summary="auto",
        extra_body={"x": 1},
        max_tokens=64,
    )
    request = types.Request(messages=history, tools=(tool,), params=params)
    body = await first_request(FakeResponses, make, request, reply="5")
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"role": "user", "content": "Add 2 and 3."},
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'},
        {"type": "function_call_output", "call_id": "c1", "output": "5"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "add",
            "description": "Add numbers.",
            "parameters": tool.parameters,
            "strict": False,
        }
    ]
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert (body["temperature"], body["max_output_tokens"], body["x"]) == (0.2, 64, 1)
    assert body["stream"] is True and body["store"] is False
    assert not {"max_tokens", "seed", "stop", "top_p", "text"} & set(body)


async def test_verbosity_goes_in_text_beside_a_json_schema_format(make):
    schema = {"title": "A", "type": "object", "properties": {}}
    params = types.GenerationParams(verbosity="low")
    body = await first_request(
        FakeResponses, make, ask(json_schema=schema, params=params), reply="{}"
    )
    assert body["text"]["verbosity"] == "low"
    assert body["text"]["format"]["type"] == "json_schema"
    plain = await first_request(FakeResponses, make, ask(params=params), reply="x")
    assert plain["text"] == {"verbosity": "low"}


async def test_json_schema_becomes_the_text_format(make):
    schema = {"title": "Workflow action", "type": "object", "properties": {}}
    body = await first_request(FakeResponses, make, ask(json_schema=schema), reply="{}")
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Workflow_action",
            "schema": schema,
            "strict": False,
        }
    }


async def test_sends_the_key_as_bearer_to_the_configured_base_url(make):
    with FakeResponses(Scripted([Reply(text="ok")])) as fake:
        backend = make(fake, model="gpt-5-mini")
        await collect(backend.stream(ask()))
        assert fake.headers[0]["authorization"] == f"Bearer {KEY}"
        assert fake.paths == ["/v1/responses"]
    assert backend.name == "openai:gpt-5-mini"


# --- Azure ------------------------------------------------------------------------------


async def test_azure_sends_the_deployment_api_version_and_api_key_header(make):
    with FakeResponses(Scripted([Reply(text="hi")])) as fake:
        backend = make(
            fake,
            model="my-gpt5-deployment",
            base_url=fake.azure_endpoint,
            azure_api_version="2025-04-01-preview",
            provider="azure_openai",
        )
        assert text_of(await collect(backend.stream(ask()))) == "hi"
        assert fake.paths == ["/openai/responses?api-version=2025-04-01-preview"]
        assert fake.headers[0]["api-key"] == KEY
        assert fake.requests[0]["model"] == "my-gpt5-deployment"


async def test_azure_endpoint_deployment_and_version_come_from_the_environment():
    with FakeResponses(Scripted([Reply(text="from env")])) as fake:
        env = {
            "AZURE_OPENAI_API_KEY": "az-key-1",
            "AZURE_OPENAI_ENDPOINT": fake.azure_endpoint,
            "AZURE_OPENAI_DEPLOYMENT_NAME": "dep-1",
            "AZURE_OPENAI_API_VERSION": "2025-03-01-preview",
        }
        backend = registry.create(BackendConfig(type="azure_openai", max_retries=0), env=env)
        try:
            assert text_of(await collect(backend.stream(ask()))) == "from env"
        finally:
            await backend.aclose()
        assert fake.paths == ["/openai/responses?api-version=2025-03-01-preview"]
        assert fake.requests[0]["model"] == "dep-1"


def test_azure_without_an_endpoint_names_the_variable():
    assert registry.check(BackendConfig(type="azure_openai")) is None  # may come from env
    with pytest.raises(errors.ConfigError) as raised:
        registry.create(
            BackendConfig(type="azure_openai", model="d"), env={"AZURE_OPENAI_API_KEY": "k"}
        )
    assert "AZURE_OPENAI_ENDPOINT" in raised.value.render()
