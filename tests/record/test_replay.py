"""Record and replay (`--replay`): a recorded run answers its own requests again, in its
own order, with no call to the model; what is new goes to the model."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import pytest

from massgen.api import TeamRun, load
from massgen.backends import replay
from massgen.backends.chat_completions import ChatCompletionsBackend
from massgen.backends.common import Endpoint
from massgen.backends.replay import JOURNAL, Tape, TapedBackend, read_record
from massgen.cli import main
from massgen.core import events as ev
from massgen.core.errors import BadRequest
from massgen.core.types import Message, Request, TextChunk, Usage
from massgen.record.journal import read_journal
from massgen.testing import policy
from massgen.testing.fake_provider import (
    FakeProvider,
    Fault,
    Reply,
    Scripted,
    cooperative_agent,
)

pytestmark = pytest.mark.usefixtures("in_tmp")

DECIDED = (ev.AnswerPublished, ev.VoteCast, ev.VoteInvalidated, ev.CoordinationFinished)


def restless(request: dict) -> Reply:
    """m0 and m1 answer twice before they vote, after a random delay: peers' votes are
    invalidated and runs interrupted mid-call, in an order that differs from run to run."""
    time.sleep(random.uniform(0, 0.1))
    model = str(request.get("model"))
    prompt = " ".join(policy._content_text(m) for m in request.get("messages") or [])
    offered = policy._offered_tools(request)
    if model in ("m0", "m1") and "new_answer" in offered and f"[{model} answer 1]" in prompt:
        text = f"[{model} answer 2] A better answer by {model}."
        return Reply(tool_calls=[("new_answer", {"content": text})])
    return cooperative_agent(request)


def team(base_url: str, n: int = 3) -> dict:
    backend = {"type": "chatcompletion", "base_url": base_url, "api_key": "sk-secret-1234"}
    return {"agents": [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(n)]}


def run(config: dict, question: str, replay: Path | None = None):
    return asyncio.run(TeamRun(load(config), question, replay=replay).execute())


def decided(log_dir: Path) -> list[dict]:
    found = [e.to_dict() for e in read_journal(log_dir / "events.jsonl") if isinstance(e, DECIDED)]
    return [{k: v for k, v in e.items() if k != "at"} for e in found]


@pytest.mark.parametrize("trial", range(5))
def test_a_replayed_run_asks_nothing_and_decides_as_the_recording_did(trial):
    with FakeProvider(restless, tokens_per_second=300) as fake:
        config = team(fake.base_url)
        recorded = run(config, "What is 2+2?")
    assert recorded.live_calls == len(fake.requests) > 9 and recorded.replayed_calls == 0
    # The server is gone: any call would fail. (A call the recording saw cancelled before
    # it answered may be cancelled here before it is asked: fewer replayed, never more.)
    again = run(config, "What is 2+2?", replay=recorded.log_dir)
    assert again.live_calls == 0 and 9 < again.replayed_calls <= recorded.live_calls
    assert again.answer == recorded.answer and again.status == recorded.status == "ok"
    assert again.winner == recorded.winner and again.tally == recorded.tally
    assert again.usage == recorded.usage  # Usage is replayed: the same tokens, per agent
    assert decided(again.log_dir) == decided(recorded.log_dir)
    # The replay's own journal is a record too: replaying it asks nothing either.
    third = run(config, "What is 2+2?", replay=again.log_dir)
    assert third.live_calls == 0 and third.answer == recorded.answer


def test_a_changed_question_goes_to_the_model():
    with FakeProvider() as fake:
        config = team(fake.base_url, 2)
        recorded = run(config, "What is 2+2?")
        before = len(fake.requests)
        changed = run(config, "What is 3+3?", replay=recorded.log_dir)
        assert changed.live_calls == len(fake.requests) - before > 0
    assert changed.replayed_calls == 0 and changed.ok


def test_the_journal_holds_no_key_and_the_seed_of_the_run():
    with FakeProvider() as fake:
        recorded = run(team(fake.base_url, 2), "q")
    text = (recorded.log_dir / JOURNAL).read_text()
    assert "sk-secret" not in text and "127.0.0.1" not in text.split('"events"')[0]
    started = next(e for e in read_journal(recorded.log_dir / "events.jsonl"))
    assert isinstance(started, ev.RunStarted)
    assert read_record(recorded.log_dir).seed == started.seed
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0] == {"session": 1} and lines[1] == {"seed": started.seed}
    assert all(line["end"] == "done" for line in lines[2:])


def test_the_backend_identity_names_no_credentials():
    identity = replay.backend_identity("chatcompletion", "m", "https://u:pw@host:8443/v1?key=s3")
    assert identity == "chatcompletion:m@host:8443/v1"


async def test_the_nth_ask_of_one_request_replays_the_nth_response(tmp_path):
    replies = [Reply(text=f"sample {i}") for i in range(3)]
    request = Request((Message("user", "pick a number"),))

    async def ask_three(tape: Tape, base_url: str) -> list[tuple[str, Usage]]:
        inner = ChatCompletionsBackend(Endpoint("test", "m", "k", base_url))
        backend = TapedBackend(inner, tape, "chatcompletion:m@fake", "a0")
        answers = []
        for _ in range(3):
            text, usage = "", Usage()
            async for event in backend.stream(request):
                if isinstance(event, TextChunk):
                    text += event.text
                elif isinstance(event, Usage):
                    usage = usage + event
            answers.append((text, usage))
        await backend.aclose()
        tape.close()
        return answers

    with FakeProvider(Scripted(replies)) as fake:
        first = await ask_three(Tape(tmp_path / "one" / JOURNAL), fake.base_url)
        tape = Tape(tmp_path / "two" / JOURNAL, read_record(tmp_path / "one"))
        second = await ask_three(tape, fake.base_url)
        assert len(fake.requests) == 3  # the recording's three, none for the replay
    assert [text for text, _ in first] == ["sample 0", "sample 1", "sample 2"]
    assert second == first and tape.replayed == 3 and tape.live == 0


async def collect(backend: TapedBackend, request: Request) -> str:
    return "".join([e.text async for e in backend.stream(request) if isinstance(e, TextChunk)])


async def test_a_provider_error_is_replayed_and_an_oversized_response_is_asked_again(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(replay, "MAX_ENTRY_BYTES", 2000)  # a smaller bound, the same rule
    script = [Reply(fault=Fault.http(400, "no such thing")), Reply(text="long " * 1000)]
    refused, long = (Request((Message("user", q),)) for q in ("refused", "long"))

    async def both(tape: Tape, base_url: str) -> tuple[str, str]:
        inner = ChatCompletionsBackend(Endpoint("test", "m", "k", base_url))
        backend = TapedBackend(inner, tape, "chatcompletion:m@fake", "a0")
        with pytest.raises(BadRequest) as error:
            await collect(backend, refused)
        text = await collect(backend, long)
        await backend.aclose()
        tape.close()
        return error.value.message, text

    with FakeProvider(Scripted([*script, script[1]])) as fake:
        first = await both(Tape(tmp_path / "one" / JOURNAL), fake.base_url)
        tape = Tape(tmp_path / "two" / JOURNAL, read_record(tmp_path / "one"))
        second = await both(tape, fake.base_url)
        assert len(fake.requests) == 3  # the long response, kept without its text, again
    assert second == first and "no such thing" in first[0]
    assert (tape.replayed, tape.live) == (1, 1)
    ends = [json.loads(line).get("end") for line in (tmp_path / "one" / JOURNAL).open()]
    assert ends[1:] == ["error", "dropped"]


def test_cli_replay_prints_the_calls_and_refuses_a_directory_without_a_record(tmp_path, capsys):
    config = tmp_path / "team.json"
    with FakeProvider() as fake:
        config.write_text(json.dumps(team(fake.base_url, 2)))
        assert main(["--config", str(config), "--automation", "q"]) == 0
        out = capsys.readouterr().out
        assert "CALLS: 5 live, 0 replayed" in out
        log_dir = next(line[9:] for line in out.splitlines() if line.startswith("LOG_DIR: "))
        answer = next(line for line in out.splitlines() if line.startswith("ANSWER: "))
        calls = len(fake.requests)
        assert main(["--config", str(config), "--automation", "--replay", log_dir, "q"]) == 0
        out = capsys.readouterr().out
        assert "CALLS: 0 live, 5 replayed" in out and answer in out
        assert len(fake.requests) == calls
    assert main(["--config", str(config), "--replay", str(tmp_path), "q"]) == 1
    err = capsys.readouterr().err
    assert "no recorded responses" in err and "Traceback" not in err
