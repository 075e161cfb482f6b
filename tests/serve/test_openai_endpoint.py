"""The official openai SDK against a real `massgen serve` on the loopback fake provider."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import openai
import pytest
from serve_fixture import FINAL_MARKDOWN, TOKEN, running_server, serve_env, write_team

from massgen.testing.fake_provider import FakeProvider, prompt_chars

QUESTION = [{"role": "user", "content": "What is 2+2?"}]


@pytest.fixture
def client(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)


def test_a_plain_request_gets_the_final_answer_and_the_team_usage(client, fakes):
    sent = len(fakes["fast"].requests)
    reply = client.chat.completions.create(model="massgen", messages=QUESTION)
    assert reply.choices[0].message.content == FINAL_MARKDOWN.strip()
    assert reply.choices[0].finish_reason == "stop"
    calls = fakes["fast"].requests[sent:]
    assert len(calls) == 7  # three answers, three votes, one presentation
    # Summed over the team: the fake counts a prompt token per four characters.
    assert reply.usage is not None
    assert reply.usage.prompt_tokens == sum(math.ceil(prompt_chars(c) / 4) for c in calls)
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    reasoning = reply.choices[0].message.model_extra["reasoning_content"]
    assert "votes for" in reasoning and "winner:" in reasoning


def test_a_stream_sends_progress_as_reasoning_then_the_answer_then_usage(client):
    stream = client.chat.completions.create(
        model="massgen", messages=QUESTION, stream=True, stream_options={"include_usage": True}
    )
    reasoning, content, usage, finish = [], [], [], []
    for chunk in stream:
        if chunk.usage is not None:
            usage.append(chunk.usage)
        for choice in chunk.choices:
            extra = choice.delta.model_extra or {}
            reasoning.append(extra.get("reasoning_content") or "")
            content.append(choice.delta.content or "")
            finish.append(choice.finish_reason)
    progress = "".join(reasoning)
    assert "[careful] answers agent" in progress and progress.count("votes for") == 3
    assert progress.index("winner:") < progress.index("presents the final answer")
    assert "".join(content) == FINAL_MARKDOWN
    assert finish[-1] == "stop" and len(usage) == 1 and usage[0].completion_tokens > 0


def test_earlier_messages_reach_the_agents_as_history(client, fakes):
    sent = len(fakes["fast"].requests)
    messages = [
        {"role": "user", "content": "Name a prime number."},
        {"role": "assistant", "content": "Seven is prime."},
        {"role": "user", "content": [{"type": "text", "text": "And one bigger than that?"}]},
    ]
    client.chat.completions.create(model="massgen", messages=messages)
    first = json.dumps(fakes["fast"].requests[sent]["messages"])
    assert "Seven is prime." in first and "And one bigger than that?" in first


def test_system_and_developer_messages_reach_every_agent_as_instructions(client, fakes):
    sent = len(fakes["fast"].requests)
    messages = [
        {"role": "system", "content": "Reply only BANANA"},
        {"role": "developer", "content": "Keep it short."},
        {"role": "user", "content": "What is 2+2?"},
    ]
    client.chat.completions.create(model="massgen", messages=messages)
    calls = fakes["fast"].requests[sent:]
    assert len(calls) == 7 and {c["model"] for c in calls} == {"m0", "m1", "m2"}
    for call in calls:  # answers, votes and the presentation alike
        system = call["messages"][0]
        assert system["role"] == "system"
        instructions = system["content"].split("# Instructions from the person asking", 1)[1]
        assert "Reply only BANANA" in instructions and "Keep it short." in instructions
        asked = json.dumps(call["messages"][1:])
        assert "BANANA" not in asked  # apart from the question


def test_models_lists_the_served_team_the_presets_and_the_teams_dir(client):
    names = [model.id for model in client.models.list()]
    assert names[0] == "massgen"
    assert {"slow", "paced"} <= set(names)
    assert any(name.startswith("@examples/") for name in names)


def test_an_unknown_team_is_an_openai_error(client):
    with pytest.raises(openai.NotFoundError) as raised:
        client.chat.completions.create(model="nope", messages=QUESTION)
    assert raised.value.code == "model_not_found"
    assert "GET /v1/models" in raised.value.message


def test_client_tools_are_refused_since_a_team_answers_in_text(client):
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="massgen", messages=QUESTION, tools=[tool])
    assert raised.value.param == "tools"


def test_a_team_that_cannot_load_is_an_openai_error_that_says_why(client):
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="broken", messages=QUESTION, stream=True)
    assert raised.value.code == "team_config" and "broken.yaml" in raised.value.message


def test_a_failure_mid_stream_arrives_as_an_openai_error(tmp_path):
    def failing(request):
        raise RuntimeError("provider exploded")  # the fake answers 500 to every call

    (tmp_path / "home").mkdir()
    with FakeProvider(failing) as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2)
        with running_server(tmp_path, "--config", "team.yaml") as server:
            client = openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)
            stream = client.chat.completions.create(model="massgen", messages=QUESTION, stream=True)
            with pytest.raises(openai.APIError) as raised:
                for _ in stream:
                    pass
    assert "no answer" in raised.value.message


def test_a_client_that_hangs_up_mid_stream_cancels_its_run(server, client, fakes):
    slow = fakes["slow"]
    sent = len(slow.requests)
    with client.chat.completions.create(model="slow", messages=QUESTION, stream=True) as stream:
        next(iter(stream))  # the run has started
        _until(lambda: len(slow.requests) - sent == 3)  # every agent's first call is in flight
    time.sleep(3.0)  # long enough for the next calls (1 s per reply) to have come
    assert len(slow.requests) - sent == 3
    _until(lambda: not any(run["live"] for run in server.get("/api/runs")[1]["runs"]))


def test_every_route_but_health_needs_the_token(server):
    assert server.get("/health", token=None) == (200, {"ok": True})
    for path in ("/v1/models", "/api/runs"):
        status, body = server.get(path, token=None)
        assert status == 401 and body["error"]["code"] == "invalid_api_key"
        assert server.get(path, token="wrong")[0] == 401
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="massgen", messages=QUESTION)


def test_no_cors_headers_unless_an_origin_is_given(server):
    request = urllib.request.Request(server.url + "/v1/models", headers={"Origin": "http://evil"})
    request.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert "access-control-allow-origin" not in {k.lower() for k in response.headers}


def test_past_the_concurrency_bound_a_request_gets_429_with_retry_after(tmp_path):
    (tmp_path / "home").mkdir()
    with FakeProvider(latency=1.0) as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2)
        with running_server(tmp_path, "--config", "team.yaml", "--max-concurrent", "1") as server:
            client = openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)
            first = threading.Thread(
                target=client.chat.completions.create,
                kwargs={"model": "massgen", "messages": QUESTION},
            )
            first.start()
            _until(lambda: len(fake.requests) > 0)
            with pytest.raises(openai.RateLimitError) as raised:
                client.chat.completions.create(model="massgen", messages=QUESTION)
            first.join(timeout=30)
    assert raised.value.response.headers["retry-after"] == "5"


def test_a_non_loopback_host_without_a_chosen_token_is_refused(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "massgen", "serve", "--host", "0.0.0.0", "--port", "1"],
        cwd=tmp_path, env=serve_env(tmp_path, token=None), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert "MASSGEN_SERVE_TOKEN" in done.stderr and "0.0.0.0" in done.stderr
    assert "Traceback" not in done.stderr
    env = {**serve_env(tmp_path, token=None), "MASSGEN_SERVE_TOKEN": "short"}
    weak = subprocess.run(
        [sys.executable, "-m", "massgen", "serve", "--host", "0.0.0.0", "--port", "1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert weak.returncode != 0 and "too short" in weak.stderr


def test_a_generated_token_is_printed_once_with_a_curl_line_and_works(tmp_path):
    (tmp_path / "home").mkdir()
    origin = "http://app.example"
    with FakeProvider() as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2)
        args = ("--config", "team.yaml", "--cors-origin", origin)
        with running_server(tmp_path, *args, token=None) as server:
            assert server.process.stdout is not None
            lines = [server.process.stdout.readline() for _ in range(4)]
            token = lines[1].rsplit(" ", 1)[1].strip()
            assert server.get("/v1/models", token=token)[0] == 200
            preflight = urllib.request.Request(
                server.url + "/v1/chat/completions",
                method="OPTIONS",
                headers={
                    "Origin": origin,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization,content-type",
                },
            )
            with urllib.request.urlopen(preflight, timeout=10) as response:
                assert response.headers["access-control-allow-origin"] == origin
    assert len(token) >= 32
    assert lines[3].startswith("try: curl") and f"Bearer {token}" in lines[3]
    assert sum(line.count(token) for line in lines) == 3  # the token line, the page, the curl


def _until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_a_plain_request_that_times_out_on_the_client_cancels_its_run(server, fakes):
    slow = fakes["slow"]
    _until(lambda: not any(run["live"] for run in server.get("/api/runs")[1]["runs"]))
    sent = len(slow.requests)
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0, timeout=0.5)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="slow", messages=QUESTION)
    _until(lambda: len(slow.requests) - sent == 3)
    time.sleep(3.0)
    assert len(slow.requests) - sent == 3


def test_a_run_stopped_from_the_web_view_ends_its_stream_with_an_openai_error(server, client):
    _until(lambda: not any(run["live"] for run in server.get("/api/runs")[1]["runs"]))
    stream = client.chat.completions.create(model="slow", messages=QUESTION, stream=True)
    chunks = iter(stream)
    next(chunks)
    live = [run["id"] for run in server.get("/api/runs")[1]["runs"] if run["live"]]
    assert len(live) == 1
    stop = urllib.request.Request(server.url + f"/api/runs/{live[0]}", method="DELETE")
    stop.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(stop, timeout=30) as response:
        assert json.loads(response.read())["cancelled"] is True
    with pytest.raises(openai.APIError, match="cancelled"):
        for _ in chunks:
            pass


def test_ctrl_c_ends_open_streams_with_an_openai_error_and_exits_cleanly(tmp_path):
    (tmp_path / "home").mkdir()
    with FakeProvider(latency=2.0) as fake:
        write_team(tmp_path / "team.yaml", fake.base_url, n=2)
        with running_server(tmp_path, "--config", "team.yaml") as server:
            client = openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)
            chunks = iter(
                client.chat.completions.create(model="massgen", messages=QUESTION, stream=True)
            )
            next(chunks)
            server.process.send_signal(signal.SIGINT)
            with pytest.raises(openai.APIError, match="cancelled"):
                for _ in chunks:
                    pass
            assert server.process.wait(timeout=30) == 0
            assert server.process.stdout is not None
            output = server.process.stdout.read()
    assert "ERROR" not in output and "Traceback" not in output
