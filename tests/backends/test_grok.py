"""GrokBackend driven through the real xai-sdk (gRPC) against the loopback FakeXai."""

import json

import pytest
from backend_support import ADD, ADD_TURN, ask, collect, first_request, text_of

from massgen.backends import registry
from massgen.backends.common import Endpoint
from massgen.backends.grok import GrokBackend, grpc_target
from massgen.config.schema import BackendConfig
from massgen.core import errors, types
from massgen.testing import Reply, Scripted
from massgen.testing.fake_xai import FakeXai


@pytest.fixture
def make(backends):
    """Build GrokBackends against a FakeXai."""
    return backends(GrokBackend, provider="grok", model="grok-4", api_key="xai-test-key")


# --- what is sent -----------------------------------------------------------------------


async def test_request_carries_history_tools_and_typed_params(make):
    history, tool = ADD_TURN, ADD
    params = types.GenerationParams(
        temperature=0.2, stop=("END",), seed=7, reasoning_effort="minimal", max_tokens=64
    )
    request = types.Request(messages=history, tools=(tool,), params=params)
    body = await first_request(FakeXai, make, request, reply="5")
    assert body["model"] == "grok-4"
    assert body["messages"] == [
        {"role": "ROLE_SYSTEM", "content": [{"text": "Be brief."}]},
        {"role": "ROLE_USER", "content": [{"text": "Add 2 and 3."}]},
        {
            "role": "ROLE_ASSISTANT",
            "content": [{"text": ""}],
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "TOOL_CALL_TYPE_CLIENT_SIDE_TOOL",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "ROLE_TOOL", "content": [{"text": "5"}], "tool_call_id": "c1"},
    ]
    (sent_tool,) = body["tools"]
    assert sent_tool["function"]["name"] == "add"
    assert json.loads(sent_tool["function"]["parameters"]) == tool.parameters
    assert (body["temperature"], body["stop"], body["seed"], body["max_tokens"]) == (
        0.2,
        ["END"],
        7,
        64,
    )
    assert body["reasoning_effort"] == "EFFORT_LOW"  # xAI has no "minimal"
    assert "top_p" not in body and "response_format" not in body


async def test_json_schema_becomes_a_response_format(make):
    schema = {"title": "Workflow action", "type": "object", "properties": {}}
    body = await first_request(FakeXai, make, ask(json_schema=schema), reply="{}")
    fmt = body["response_format"]
    assert fmt["format_type"] == "FORMAT_TYPE_JSON_SCHEMA"
    assert json.loads(fmt["schema"]) == schema


# --- endpoints and config ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "target"),
    [
        ("https://api.x.ai", ("api.x.ai", False)),
        ("https://api.x.ai/v1", ("api.x.ai", False)),
        ("https://grok.example.com:8443", ("grok.example.com:8443", False)),
        ("http://127.0.0.1:50051", ("127.0.0.1:50051", True)),
        ("http://localhost:50051", ("localhost:50051", True)),
        ("127.0.0.1:50051", ("127.0.0.1:50051", True)),
        ("grok.example.com:443", ("grok.example.com:443", False)),
    ],
)
def test_base_url_names_the_grpc_target(base_url, target):
    assert grpc_target(base_url) == target


@pytest.mark.parametrize(
    ("base_url", "wording"),
    [
        ("http://api.x.ai:80", "only allowed to a loopback host"),
        ("http://127.0.0.1", "needs a port"),
        ("ftp://api.x.ai", "neither https:// nor http://"),
    ],
)
def test_unusable_base_urls_are_refused(base_url, wording):
    with pytest.raises(ValueError, match=wording):
        grpc_target(base_url)
    with pytest.raises(errors.ConfigError, match=wording):
        GrokBackend(Endpoint("grok", "grok-4", "k", base_url))


def test_validation_refuses_extra_body_and_plaintext_to_remote_hosts():
    key, message, fix = registry.check(BackendConfig(type="grok", extra_body={"x": 1}))
    assert key == "extra_body" and "does not accept extra_body" in message
    assert "typed parameters" in fix
    key, message, _ = registry.check(BackendConfig(type="grok", base_url="http://10.0.0.2:1"))
    assert key == "base_url" and "loopback" in message
    key, message, _ = registry.check(BackendConfig(type="grok", base_url="ftp://api.x.ai"))
    assert key == "base_url" and "neither https:// nor http://" in message


@pytest.mark.parametrize(
    "base_url",
    [
        None,
        "https://api.x.ai",
        "https://grok.example.com:8443",
        "http://127.0.0.1:50051",
        "http://localhost:50051",
        "127.0.0.1:50051",  # the bare form the module docstring documents
        "localhost:50051",
        "grok.example.com:443",
    ],
)
def test_validation_accepts_every_documented_base_url_form(base_url):
    assert registry.check(BackendConfig(type="grok", base_url=base_url)) is None


async def test_a_bare_host_and_port_reaches_a_local_server(make):
    with FakeXai(Scripted([Reply(text="ok")])) as fake:
        bare = fake.base_url.removeprefix("http://")
        cfg = BackendConfig(type="grok", base_url=bare, api_key="k", max_retries=0)
        backend = registry.create(cfg)
        try:
            assert text_of(await collect(backend.stream(ask()))) == "ok"
        finally:
            await backend.aclose()
        assert len(fake.requests) == 1


async def test_a_request_with_extra_body_is_refused_too(make):
    refused = pytest.raises(errors.BadRequest, match="extra_body")
    with FakeXai(Scripted([Reply(text="ok")])) as fake, refused:
        await collect(make(fake).stream(ask(params=types.GenerationParams(extra_body={"x": 1}))))
    assert fake.requests == []
