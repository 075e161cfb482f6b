"""Stored responses (`GET` / `DELETE /v1/responses/{id}`), driven by the real openai SDK
against a real `massgen serve` on loopback fakes, as a client that retrieves a response
later (or a background job's poller) uses them."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import openai
import pytest
from serve_fixture import FINAL_MARKDOWN, TOKEN, chatty_agent, running_server, write_team

from massgen.coordination.prompts import Turn
from massgen.serve.stored import Responses
from massgen.testing.fake_provider import FakeProvider

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stored")
    (folder / "home").mkdir()
    (folder / "teams").mkdir()
    with FakeProvider(chatty_agent) as fast, FakeProvider(chatty_agent, latency=0.5) as slow:
        write_team(folder / "team.yaml", fast.base_url)
        write_team(folder / "teams" / "slow.yaml", slow.base_url)
        with running_server(folder, "--config", "team.yaml", "--teams-dir", "teams") as running:
            yield running


@pytest.fixture
def client(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)


def test_a_response_is_retrieved_as_it_was_given(client):
    given = client.responses.create(model="massgen", input="What is 2+2?")
    found = client.responses.retrieve(given.id)
    assert found.id == given.id and found.status == "completed" and found.store is True
    assert found.output_text == given.output_text == FINAL_MARKDOWN.strip()
    assert found.usage == given.usage


def test_a_streamed_response_is_stored_in_progress_then_completed(client):
    with client.responses.stream(model="slow", input="What is 2+2?") as stream:
        created = next(e for e in stream if e.type == "response.created")
        during = client.responses.retrieve(created.response.id)
        final = stream.get_final_response()
    assert during.status == "in_progress"
    after = client.responses.retrieve(created.response.id)
    assert after.status == "completed" and after.output_text == final.output_text


def test_a_stream_the_client_left_is_stored_as_cancelled(client):
    stream = client.responses.create(model="slow", input="What is 2+2?", stream=True)
    response_id = next(e for e in stream if e.type == "response.created").response.id
    stream.close()
    deadline = time.monotonic() + 30
    while client.responses.retrieve(response_id).status == "in_progress":
        assert time.monotonic() < deadline, "the stored response stayed in progress"
        time.sleep(0.2)
    assert client.responses.retrieve(response_id).status == "cancelled"


def test_store_false_keeps_nothing_to_retrieve_or_continue(client):
    given = client.responses.create(model="massgen", input="What is 2+2?", store=False)
    assert given.store is False
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(given.id)
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.create(model="massgen", input="And?", previous_response_id=given.id)
    assert raised.value.code == "previous_response_not_found"


def test_an_unknown_id_is_a_404_in_openais_error_shape(client, server):
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.retrieve("resp_nope")
    assert raised.value.code == "response_not_found"
    assert "resp_nope" in raised.value.message and "store" in raised.value.message
    status, headers, body = _get(server.url + "/v1/responses/resp_nope", TOKEN)
    assert status == 404 and headers["content-type"] == "application/json"
    assert body["error"]["type"] == "invalid_request_error"


def test_retrieving_needs_the_token(client, server):
    given = client.responses.create(model="massgen", input="What is 2+2?")
    for token in (None, "wrong-token-0123456789"):
        status, _, body = _get(f"{server.url}/v1/responses/{given.id}", token)
        assert status == 401 and body["error"]["code"] == "invalid_api_key"
        assert FINAL_MARKDOWN.strip() not in json.dumps(body)


def test_a_deleted_response_is_gone(client):
    given = client.responses.create(model="massgen", input="What is 2+2?")
    client.responses.delete(given.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(given.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(given.id)


def test_streaming_a_stored_response_again_is_refused(client):
    given = client.responses.create(model="massgen", input="What is 2+2?")
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.retrieve(given.id, stream=True)
    assert raised.value.param == "stream"


# --- the bound ---------------------------------------------------------------------------


def _body(response_id: str, text: str = "x") -> dict:
    return {"id": response_id, "status": "completed", "output": [{"text": text}]}


def test_the_least_recently_used_response_goes_first():
    stored = Responses(limit=2)
    stored.keep(_body("a"), (Turn("q", "a"),))
    stored.keep(_body("b"))
    assert stored.get("a") is not None  # used: now the newest
    stored.keep(_body("c"))
    assert stored.get("b") is None
    assert stored.get("a") is not None and stored.get("c") is not None


def test_the_stored_text_is_bounded_too():
    stored = Responses(limit=100, max_chars=3000)
    for name in "abcd":
        stored.keep(_body(name, text=name * 1000))
    assert [n for n in "abcd" if stored.get(n)] == ["c", "d"]
    stored.keep(_body("d", text="short"))  # replacing one frees its room
    stored.keep(_body("e", text="e" * 1000))
    assert [n for n in "cde" if stored.get(n)] == ["c", "d", "e"]


def _get(url: str, token: str | None) -> tuple[int, dict, dict]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as reply:
            return reply.status, dict(reply.headers), json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())
