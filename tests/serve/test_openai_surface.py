"""What OpenAI clients use beyond plain chat (issue 27 item 3), each driven by the real
openai SDK against a real `massgen serve` on loopback fakes: the Responses API,
structured output, sampling options, max_tokens and stop, images, model lookup, errors
on unknown routes, and the SSE framing a hand-written parser reads."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.request

import openai
import pytest
import yaml
from pydantic import BaseModel
from serve_fixture import FINAL_MARKDOWN, TOKEN, chatty_agent, running_server, write_team

from massgen.testing.fake_provider import FakeProvider, Reply

QUESTION = [{"role": "user", "content": "What is 2+2?"}]
FORM = "# The form of the answer"
SUM = {"value": 4, "explanation": "two and two"}
# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
IMAGE_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


class Sum(BaseModel):
    value: int
    explanation: str


def shaped_agent(request):
    """`chatty_agent`, whose final answer is JSON in a fence when told the form, unless
    the question says PROSE (then only the repair call, which asks for the schema
    natively, writes JSON)."""
    reply = chatty_agent(request)
    system = str(request["messages"][0].get("content"))
    if reply.text == FINAL_MARKDOWN and FORM in system:
        if "PROSE" in json.dumps(request["messages"]):
            return reply
        return Reply(text="```json\n" + json.dumps(SUM) + "\n```")
    return reply


def stubborn_agent(request):
    """Never writes JSON: not when told, not when the provider is asked for a schema."""
    if request.get("response_format"):
        return Reply(text="I would rather explain it in words.")
    return chatty_agent(request)


@pytest.fixture(scope="module")
def fakes():
    with FakeProvider(shaped_agent) as shaped, FakeProvider(stubborn_agent) as stubborn:
        yield {"shaped": shaped, "stubborn": stubborn}


@pytest.fixture(scope="module")
def server(tmp_path_factory, fakes):
    folder = tmp_path_factory.mktemp("surface")
    (folder / "home").mkdir()
    teams = folder / "teams"
    teams.mkdir()
    write_team(folder / "team.yaml", fakes["shaped"].base_url)
    write_team(teams / "stubborn.yaml", fakes["stubborn"].base_url, n=2)
    url = fakes["shaped"].base_url
    _team(teams / "keyless.yaml", [{"id": "needs_key", "backend": {"type": "openai", "model": "gpt-5"}}])  # fmt: skip
    responses_agent = {"type": "openai", "model": "gpt-5", "api_key": "sk-fake", "base_url": url}
    _team(teams / "mixed.yaml", [
        {"id": "chatty", "backend": {"type": "chatcompletion", "model": "m0", "base_url": url}},
        {"id": "responder", "backend": responses_agent},
    ])  # fmt: skip
    _team(teams / "textonly.yaml", [
        {"id": "chatty", "backend": {"type": "chatcompletion", "model": "m0", "base_url": url}},
        {"id": "tiny", "backend": {"type": "local"}},
    ])  # fmt: skip
    with running_server(folder, "--config", "team.yaml", "--teams-dir", "teams") as running:
        yield running


def _team(path, agents):
    path.write_text(yaml.safe_dump({"agents": agents}))


@pytest.fixture
def client(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)


# --- /v1/responses -----------------------------------------------------------------------


def test_responses_create_answers_with_instructions_and_usage(client, fakes):
    sent = len(fakes["shaped"].requests)
    response = client.responses.create(
        model="massgen", input="What is 2+2?", instructions="Reply only BANANA"
    )
    assert response.status == "completed"
    assert response.output_text == FINAL_MARKDOWN.strip()
    assert response.usage is not None and response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    calls = fakes["shaped"].requests[sent:]
    assert len(calls) == 7
    assert all("Reply only BANANA" in c["messages"][0]["content"] for c in calls)


def test_responses_stream_sends_the_event_types_the_sdk_reads(client):
    with client.responses.stream(model="massgen", input=QUESTION) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    for kind in (
        "response.created",
        "response.in_progress",
        "response.reasoning_summary_text.delta",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ):
        assert kind in kinds, kind
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final.output_text == FINAL_MARKDOWN
    progress = final.output[0]
    assert progress.type == "reasoning" and "votes for" in progress.summary[0].text


def test_responses_with_stream_true_and_a_message_list(client):
    events = list(
        client.responses.create(
            model="massgen",
            input=[
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "input_text", "text": "What is 2+2?"}]},
            ],
            stream=True,
        )
    )
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == FINAL_MARKDOWN
    assert events[-1].type == "response.completed" and events[-1].response.usage is not None


def test_previous_response_id_continues_the_conversation(client, fakes):
    first = client.responses.create(model="massgen", input="Name a prime number.")
    sent = len(fakes["shaped"].requests)
    client.responses.create(model="massgen", input="And one bigger?", previous_response_id=first.id)
    seen = json.dumps(fakes["shaped"].requests[sent]["messages"])
    assert "Name a prime number." in seen and "And one bigger?" in seen
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.create(model="massgen", input="x", previous_response_id="resp_nope")
    assert "previous_response_id" in raised.value.message


# --- structured output -------------------------------------------------------------------


def test_parse_with_a_pydantic_model_gets_valid_json_and_every_agent_is_told(client, fakes):
    sent = len(fakes["shaped"].requests)
    completion = client.chat.completions.parse(
        model="massgen", messages=QUESTION, response_format=Sum
    )
    assert completion.choices[0].message.parsed == Sum(**SUM)
    calls = fakes["shaped"].requests[sent:]
    assert len(calls) == 7 and all(FORM in c["messages"][0]["content"] for c in calls)
    assert all('"explanation"' in c["messages"][0]["content"] for c in calls)


def test_an_answer_that_is_not_json_is_repaired_by_the_presenters_model(client, fakes):
    sent = len(fakes["shaped"].requests)
    completion = client.chat.completions.parse(
        model="massgen",
        messages=[{"role": "user", "content": "What is 2+2? PROSE"}],
        response_format=Sum,
    )
    parsed = completion.choices[0].message.parsed
    assert parsed is not None and isinstance(parsed.value, int)
    repair = fakes["shaped"].requests[-1]
    assert len(fakes["shaped"].requests) - sent == 8  # the team's 7, then one repair
    assert repair["response_format"]["type"] == "json_schema"
    assert "The answer:" in repair["messages"][1]["content"]


def test_a_team_that_never_writes_json_is_a_clear_400(client, fakes):
    sent = len(fakes["stubborn"].requests)
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.parse(model="stubborn", messages=QUESTION, response_format=Sum)
    assert raised.value.code == "answer_not_json" and "not JSON" in raised.value.message
    assert len(fakes["stubborn"].requests) - sent == 5 + 2  # the team's, then two repairs


def test_responses_text_format_json_schema_and_json_object(client):
    schema = Sum.model_json_schema()
    fmt = {"format": {"type": "json_schema", "name": "sum", "schema": schema}}
    response = client.responses.create(model="massgen", input="What is 2+2?", text=fmt)
    assert json.loads(response.output_text) == SUM
    chat = client.chat.completions.create(
        model="massgen", messages=QUESTION, response_format={"type": "json_object"}
    )
    assert json.loads(chat.choices[0].message.content) == SUM


def test_an_invalid_schema_is_refused_before_any_run(client, fakes):
    sent = len(fakes["shaped"].requests)
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": 3}}}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="massgen", messages=QUESTION, response_format=bad)
    assert "invalid JSON schema" in raised.value.message
    assert len(fakes["shaped"].requests) == sent


# --- sampling, max_tokens, stop --------------------------------------------------------------


def test_temperature_and_seed_reach_every_member(client, fakes):
    sent = len(fakes["shaped"].requests)
    client.chat.completions.create(model="massgen", messages=QUESTION, temperature=0.2, seed=7)
    calls = fakes["shaped"].requests[sent:]
    assert len(calls) == 7
    assert all(c.get("temperature") == 0.2 and c.get("seed") == 7 for c in calls)


def test_an_option_a_member_cannot_take_is_refused_naming_it(client):
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="mixed", messages=QUESTION, seed=7)
    assert raised.value.param == "seed" and "responder" in raised.value.message
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="massgen", messages=QUESTION, temperature=9)
    assert raised.value.param == "temperature"


def test_max_tokens_cuts_the_final_answer_with_finish_reason_length(client):
    reply = client.chat.completions.create(model="massgen", messages=QUESTION, max_tokens=5)
    assert reply.choices[0].finish_reason == "length"
    assert reply.choices[0].message.content == FINAL_MARKDOWN[:20]
    stream = client.chat.completions.create(
        model="massgen", messages=QUESTION, max_completion_tokens=5, stream=True
    )
    chunks = [c for c in stream if c.choices]
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == FINAL_MARKDOWN[:20]
    assert chunks[-1].choices[0].finish_reason == "length"
    response = client.responses.create(model="massgen", input="2+2?", max_output_tokens=5)
    assert response.status == "incomplete" and response.output_text == FINAL_MARKDOWN[:20]
    assert response.incomplete_details.reason == "max_output_tokens"


def test_stop_ends_the_final_answer_before_the_stop_string(client):
    reply = client.chat.completions.create(model="massgen", messages=QUESTION, stop=["checked"])
    assert reply.choices[0].message.content == FINAL_MARKDOWN.split("checked")[0]
    assert reply.choices[0].finish_reason == "stop"
    stream = client.chat.completions.create(
        model="massgen", messages=QUESTION, stop="**", stream=True
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == FINAL_MARKDOWN.split("**")[0]


# --- images ------------------------------------------------------------------------------


def test_an_image_reaches_every_agent_that_reads_images(client, fakes):
    sent = len(fakes["shaped"].requests)
    content = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": IMAGE_URL}},
    ]
    client.chat.completions.create(model="massgen", messages=[{"role": "user", "content": content}])
    calls = fakes["shaped"].requests[sent:]
    assert len(calls) == 7
    for call in calls:
        parts = [
            p for m in call["messages"] if isinstance(m["content"], list) for p in m["content"]
        ]
        assert any(
            p.get("type") == "image_url" and p["image_url"]["url"] == IMAGE_URL for p in parts
        )


def test_an_image_for_a_team_with_an_agent_that_cannot_read_it_is_a_400_naming_it(client):
    content = [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": IMAGE_URL}}]  # fmt: skip
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="textonly", messages=[{"role": "user", "content": content}])  # fmt: skip
    assert "'tiny' cannot read images" in raised.value.message


def test_an_image_only_message_is_a_400_that_says_what_is_missing(client):
    content = [{"type": "image_url", "image_url": {"url": IMAGE_URL}}]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="massgen", messages=[{"role": "user", "content": content}])  # fmt: skip
    assert "image but no text" in raised.value.message
    remote = [{"type": "text", "text": "x"}, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]  # fmt: skip
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="massgen", messages=[{"role": "user", "content": remote}])  # fmt: skip
    assert "data:" in raised.value.message


# --- models ------------------------------------------------------------------------------


def test_models_lists_only_teams_that_can_run_and_retrieve_works(client):
    names = [model.id for model in client.models.list()]
    assert names[0] == "massgen" and "stubborn" in names and "mixed" in names
    assert "keyless" not in names  # its agent needs OPENAI_API_KEY, which is not set
    assert client.models.retrieve("massgen").id == "massgen"
    for name in names:  # every listed preset can run here too
        assert client.models.retrieve(name).id == name
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")


def test_a_team_that_cannot_run_here_is_a_400_at_request_time(client):
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="keyless", messages=QUESTION)
    assert "cannot run here" in raised.value.message and "needs_key" in raised.value.message
    with pytest.raises(openai.BadRequestError):
        client.models.retrieve("keyless")


# --- errors and framing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/v1/completions", 404),
        ("POST", "/v1/embeddings", 404),
        ("GET", "/v1/chat/completions", 405),
        ("GET", "/v1/responses", 405),
    ],
)
def test_unknown_routes_answer_openai_shaped_json(server, method, path, status):
    request = urllib.request.Request(server.url + path, method=method, data=b"{}" if method == "POST" else None)  # fmt: skip
    request.add_header("Authorization", f"Bearer {TOKEN}")
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    assert raised.value.code == status
    assert raised.value.headers["content-type"] == "application/json"
    error = json.loads(raised.value.read())["error"]
    assert path in error["message"] and error["type"] and error["code"]


def test_the_sdk_shows_the_message_of_an_unknown_route(client):
    with pytest.raises(openai.NotFoundError) as raised:
        client.embeddings.create(model="massgen", input="x")
    assert "/v1/embeddings" in raised.value.message


def test_sse_frames_end_with_a_blank_line_and_a_failed_stream_ends_with_done(tmp_path):
    def failing(request):
        raise RuntimeError("provider exploded")

    (tmp_path / "home").mkdir()
    with FakeProvider(failing) as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2)
        with running_server(tmp_path, "--config", "team.yaml") as running:
            for path, body in (
                ("/v1/chat/completions", {"messages": QUESTION}),
                ("/v1/responses", {"input": "What is 2+2?"}),
            ):
                raw = _post_raw(running.url + path, {"model": "massgen", "stream": True, **body})
                assert b"\r\n" not in raw
                frames = raw.decode().split("\n\n")
                datas = [f for f in frames if f.strip() and not f.startswith(":")]
                assert datas[-1].endswith("data: [DONE]"), datas[-2:]
                assert '"error"' in datas[-2] or '"error"' in datas[-3]


def _post_raw(url: str, body: dict) -> bytes:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Authorization", f"Bearer {TOKEN}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


# --- openai-agents, with its default model (the Responses API) ----------------------------


def test_openai_agents_runs_the_team_as_its_model(server, fakes):
    agents = pytest.importorskip("agents")
    agents.set_tracing_disabled(True)  # no network: traces would go to OpenAI

    def asker():  # one client per event loop
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)
        model = agents.OpenAIResponsesModel(model="massgen", openai_client=client)
        return agents.Agent(name="asker", instructions="Reply only BANANA", model=model)

    sent = len(fakes["shaped"].requests)
    result = agents.Runner.run_sync(asker(), "What is 2+2?")
    assert result.final_output == FINAL_MARKDOWN.strip()
    calls = fakes["shaped"].requests[sent:]
    assert len(calls) == 7 and all(
        "Reply only BANANA" in c["messages"][0]["content"] for c in calls
    )

    async def streamed() -> tuple[str, list[str]]:
        run = agents.Runner.run_streamed(asker(), "What is 2+2?")
        kinds = [event.type async for event in run.stream_events()]
        return str(run.final_output), kinds

    output, kinds = asyncio.run(streamed())
    assert output == FINAL_MARKDOWN and "raw_response_event" in kinds
