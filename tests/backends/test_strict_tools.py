"""`enable_strict_tool_use` on `type: claude`: through the real anthropic SDK against the
loopback Messages fake, every tool definition of the agent carries `strict: true` and a
schema strict mode accepts; other backend types refuse the key, naming where it works."""

from __future__ import annotations

import textwrap

import pytest

from massgen.api import TeamRun
from massgen.core.errors import ConfigError
from massgen.runs.loading import load
from massgen.testing import Reply, cooperative_agent
from massgen.testing.fake_anthropic import FakeAnthropic

ADDER = '''
def add(x: int, y: int) -> str:
    """Add two numbers."""
    return f"{x} + {y} = {x + y}"
'''


def adder(request: dict) -> Reply:
    """Adds with the tool, then answers with its result."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    if "new_answer" in offered and not results:
        return Reply(tool_calls=[("add", {"x": 20, "y": 22})])
    if "new_answer" in offered:
        return Reply(tool_calls=[("new_answer", {"content": f"Result: {results[-1]}"})])
    return cooperative_agent(request)


def claude(base_url: str, **backend) -> dict:
    return {
        "agents": [
            {
                "id": "c",
                "backend": {
                    "type": "claude",
                    "model": "claude-sonnet-4-6",
                    "base_url": base_url,
                    "api_key": "sk-ant-test",
                    **backend,
                },
            }
        ]
    }


def objects(schema: object) -> list[dict]:
    """Every object schema inside `schema`."""
    if isinstance(schema, list):
        return [o for item in schema for o in objects(item)]
    if not isinstance(schema, dict):
        return []
    own = [schema] if schema.get("type") == "object" else []
    return own + [o for value in schema.values() for o in objects(value)]


async def test_every_tool_of_the_agent_is_strict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools.py").write_text(textwrap.dedent(ADDER))
    tool = {"name": "add", "path": "tools.py", "function": "add"}
    with FakeAnthropic(adder) as fake:
        config = claude(fake.base_url, enable_strict_tool_use=True, custom_tools=[tool], cwd="ws")
        result = await TeamRun(load(config), "What is 20 + 22?", logs=False).execute()
        bodies, headers = fake.requests, fake.headers

    assert result.ok, result.reason
    assert "20 + 22 = 42" in result.answer
    tools = bodies[0]["tools"]
    names = {t["name"] for t in tools}
    assert {"add", "new_answer", "write_file"} <= names  # custom, workflow and file tools
    assert all(t["strict"] is True for t in tools)
    assert all(o["additionalProperties"] is False for t in tools for o in objects(t))
    add = next(t for t in tools if t["name"] == "add")
    assert add["input_schema"]["properties"]["x"]["type"] == "integer"
    assert all("anthropic-beta" not in h for h in headers)  # generally available


async def test_without_the_key_no_tool_is_strict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with FakeAnthropic(cooperative_agent) as fake:
        result = await TeamRun(load(claude(fake.base_url, cwd="ws")), "Hi?", logs=False).execute()
        tools = fake.requests[0]["tools"]
    assert result.ok and tools
    assert not any("strict" in t for t in tools)


def test_a_schema_strict_mode_cannot_express_leaves_that_tool_loose():
    from massgen.backends.anthropic_messages import AnthropicBackend
    from massgen.backends.common import Endpoint
    from massgen.core import types

    backend = AnthropicBackend(
        Endpoint(provider="claude", model="m", api_key="k", base_url="http://127.0.0.1:9"),
        strict_tools=True,
    )
    anything = types.ToolSpec("any", "", {"type": "object", "properties": {"v": {}}})
    typed = types.ToolSpec("n", "", {"type": "object", "properties": {"k": {"type": "integer"}}})
    request = types.Request((types.Message("user", "hi"),), (anything, typed))
    loose, strict = backend._payload(request)["tools"]
    assert "strict" not in loose and loose["input_schema"] == anything.parameters
    assert strict["strict"] is True and strict["input_schema"]["additionalProperties"] is False


@pytest.mark.parametrize("kind", ["openai", "gemini", "chatcompletion"])
def test_other_backend_types_refuse_it_naming_where_it_works(kind):
    backend = {"type": kind, "model": "m", "api_key": "k", "enable_strict_tool_use": True}
    if kind == "chatcompletion":
        backend["base_url"] = "http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError) as error:
        load({"agents": [{"id": "a", "backend": backend}]})
    text = str(error.value)
    assert "enable_strict_tool_use" in text and "claude" in text
