"""The SDKs and CLIs people point at an OpenAI-compatible endpoint (issue 27 item 4), each
configured as its own docs say and driven for real against a real `massgen serve` on the
loopback fake provider: litellm, langchain-openai, pydantic-ai and the `llm` CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from serve_fixture import FINAL_MARKDOWN, ROOT, TOKEN, running_server, write_team
from test_openai_surface import FORM, SUM, Sum, shaped_agent

from massgen.testing.fake_provider import FakeProvider

# litellm fetches its model price list from GitHub on import unless told to use its copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

LLM_CLI = Path(sys.executable).with_name("llm")
BANANA = "Reply only BANANA"


@pytest.fixture(scope="module")
def fake():
    with FakeProvider(shaped_agent) as shaped:
        yield shaped


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake):
    folder = tmp_path_factory.mktemp("clients")
    (folder / "home").mkdir()
    write_team(folder / "team.yaml", fake.base_url)
    with running_server(folder, "--config", "team.yaml") as running:
        yield running


def _told(requests: list[dict], text: str) -> bool:
    """Every agent call of the run had `text` in its system message."""
    return len(requests) == 7 and all(text in r["messages"][0]["content"] for r in requests)


# --- litellm ------------------------------------------------------------------------------


def test_litellm_completion_streaming_and_responses(server, fake):
    import litellm

    where = {"model": "openai/massgen", "api_base": server.url + "/v1", "api_key": TOKEN}
    sent = len(fake.requests)
    messages = [{"role": "system", "content": BANANA}, {"role": "user", "content": "2+2?"}]
    reply = litellm.completion(messages=messages, **where)
    assert reply.choices[0].message.content == FINAL_MARKDOWN.strip()
    assert reply.usage.completion_tokens > 0
    assert _told(fake.requests[sent:], BANANA)

    stream = litellm.completion(messages=messages, stream=True, **where)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert text == FINAL_MARKDOWN

    sent = len(fake.requests)
    response = litellm.responses(input="What is 2+2?", instructions=BANANA, **where)
    assert response.output[-1].content[0].text == FINAL_MARKDOWN.strip()
    assert [item.type for item in response.output] == ["reasoning", "message"]  # /v1/responses
    assert _told(fake.requests[sent:], BANANA)


# --- langchain-openai ---------------------------------------------------------------------


def test_langchain_structured_output_and_the_responses_api(server, fake):
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model="massgen", base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)
    sent = len(fake.requests)
    answer = chat.with_structured_output(Sum).invoke(
        [SystemMessage(BANANA), HumanMessage("What is 2+2?")]
    )
    assert answer == Sum(**SUM)
    assert _told(fake.requests[sent:], FORM) and _told(fake.requests[sent:], BANANA)
    # A tool the call forces (`tool_choice` naming it) is the form of the answer too.
    called = chat.with_structured_output(Sum, method="function_calling").invoke("What is 2+2?")
    assert called == Sum(**SUM)
    assert chat.invoke("What is 2+2?").content == FINAL_MARKDOWN.strip()
    responses = ChatOpenAI(
        model="massgen", base_url=server.url + "/v1", api_key=TOKEN, use_responses_api=True
    )
    said = responses.invoke("What is 2+2?")
    assert said.text == FINAL_MARKDOWN.strip()
    assert said.content[0]["type"] == "reasoning"  # the team's progress, via /v1/responses


# --- pydantic-ai --------------------------------------------------------------------------


def _pydantic_ai_agent(server, output_type, responses: bool = False):
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=server.url + "/v1", api_key=TOKEN)
    wire = OpenAIResponsesModel if responses else OpenAIChatModel
    return Agent(wire("massgen", provider=provider), output_type=output_type, instructions=BANANA, retries=0)  # fmt: skip


def test_pydantic_ai_native_output_and_instructions(server, fake):
    from pydantic_ai import NativeOutput

    sent = len(fake.requests)
    result = _pydantic_ai_agent(server, NativeOutput(Sum)).run_sync("What is 2+2?")
    assert result.output == Sum(**SUM)
    assert _told(fake.requests[sent:], FORM) and _told(fake.requests[sent:], BANANA)
    text = _pydantic_ai_agent(server, str).run_sync("What is 2+2?")
    assert text.output == FINAL_MARKDOWN.strip()

    async def streamed() -> str:
        async with _pydantic_ai_agent(server, str).run_stream("What is 2+2?") as run:
            return "".join([delta async for delta in run.stream_text(delta=True)])

    assert asyncio.run(streamed()) == FINAL_MARKDOWN


@pytest.mark.parametrize("responses", [False, True], ids=["chat", "responses"])
def test_pydantic_ai_default_tool_output_gets_the_answer_as_the_tool_call(server, fake, responses):
    """pydantic-ai's default for a model `output_type` is a `final_result` tool it forces
    (`tool_choice: required`): the team's answer, JSON for the tool's schema, comes back as
    that tool's call; streamed too, and a conversation goes on from it."""
    agent = _pydantic_ai_agent(server, Sum, responses)
    sent = len(fake.requests)
    result = agent.run_sync("What is 2+2?")
    assert result.output == Sum(**SUM)
    assert _told(fake.requests[sent:], FORM) and _told(fake.requests[sent:], '"explanation"')

    async def streamed() -> Sum:
        async with agent.run_stream("What is 2+2?") as run:
            return await run.get_output()

    assert asyncio.run(streamed()) == Sum(**SUM)
    sent = len(fake.requests)
    again = agent.run_sync("And 3+3?", message_history=result.all_messages())
    assert again.output == Sum(**SUM)
    seen = json.dumps(fake.requests[sent]["messages"])
    assert "What is 2+2?" in seen and "two and two" in seen and "And 3+3?" in seen


def test_client_tools_the_team_would_have_to_call_are_refused_saying_what_works(server, fake):
    """A function tool the model may call (pydantic-ai's `@agent.tool`, `tool_choice`
    auto) would need the client to run it mid-answer: a team calls no client tools."""
    import openai

    client = openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)
    tool = {"type": "function", "function": {"name": "roll_die", "parameters": {"type": "object"}}}
    sent = len(fake.requests)
    asked = {"model": "massgen", "messages": [{"role": "user", "content": "Roll."}]}
    for extra in ({"tools": [tool]}, {"tools": [tool, tool], "tool_choice": "required"}):
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(**asked, **extra)
        assert raised.value.param == "tools" and "calls no client tools" in raised.value.message
        assert "forces" in raised.value.message and "response_format" in raised.value.message
    flat = {"type": "function", "name": "roll_die", "parameters": {"type": "object"}}
    with pytest.raises(openai.BadRequestError, match="calls no client tools"):
        client.responses.create(model="massgen", input="Roll.", tools=[flat], tool_choice="auto")
    assert len(fake.requests) == sent  # refused before any agent ran


# --- the `llm` CLI ------------------------------------------------------------------------


def _llm(server, tmp_path: Path, *args: str) -> str:
    """`llm` with the team registered as the README says: its extra-openai-models.yaml
    (on this server's port) and a stored key, in a fresh LLM_USER_PATH."""
    readme = (ROOT / "README.md").read_text().split("### From SDKs and tools", 1)[1]
    [model] = yaml.safe_load(readme.split("```yaml\n", 1)[1].split("```", 1)[0])
    assert model["api_base"] == "http://127.0.0.1:8642/v1"
    model["api_base"] = server.url + "/v1"
    (tmp_path / "extra-openai-models.yaml").write_text(yaml.safe_dump([model]))
    (tmp_path / "keys.json").write_text(json.dumps({"massgen": TOKEN}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MASSGEN_"))}
    env["LLM_USER_PATH"] = str(tmp_path)
    done = subprocess.run(
        [str(LLM_CLI), "-m", "massgen", *args], env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_llm_cli_with_a_system_prompt_streaming_and_a_schema(server, fake, tmp_path):
    sent = len(fake.requests)
    assert _llm(server, tmp_path, "-s", BANANA, "What is 2+2?").strip() == FINAL_MARKDOWN.strip()
    assert _told(fake.requests[sent:], BANANA)
    said = _llm(server, tmp_path, "--no-stream", "What is 2+2?")
    assert said.strip() == FINAL_MARKDOWN.strip()
    sent = len(fake.requests)
    shaped = _llm(server, tmp_path, "--schema", "value int, explanation", "What is 2+2?")
    assert json.loads(shaped) == SUM
    assert _told(fake.requests[sent:], FORM)
