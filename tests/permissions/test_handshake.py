"""The file handshake against a responder that is another thread, as a person's script
would be: the request it reads, the answer it writes, and every way an answer is no."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest
from asks import git_push

from massgen.core.effects import External, Write
from massgen.permissions import handshake
from massgen.permissions.approval import ApprovalRequest, Choice
from massgen.permissions.handshake import FileHandshake

PUSH = git_push()


def responder(folder: Path, answers: list[bytes], seen: list[dict], delay: float = 0.0):
    """A thread that answers each request file it finds with the next of `answers`."""

    def run() -> None:
        deadline = time.monotonic() + 10
        pending = list(answers)
        while pending and time.monotonic() < deadline:
            for asked in sorted(folder.glob("*/req_*.json")):
                body = json.loads(asked.read_text())
                if any(
                    s["id"] == body["id"] and s["created_at"] == body["created_at"] for s in seen
                ):
                    continue
                seen.append(body)
                time.sleep(delay)
                answer = asked.with_name(asked.name.replace("req_", "resp_"))
                temporary = answer.with_suffix(".tmp")
                temporary.write_bytes(pending.pop(0))
                temporary.rename(answer)
                break
            time.sleep(0.01)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def approver(folder: Path, timeout: float = 5.0) -> FileHandshake:
    return FileHandshake(folder, timeout_seconds=timeout, poll_seconds=0.02)


@pytest.mark.parametrize(
    ("answer", "choice"),
    [
        ({"approved": True, "scope": "once"}, Choice.ONCE),
        ({"approved": True, "scope": "session", "feedback": "ok"}, Choice.SESSION),
        ({"approved": True, "scope": "always"}, Choice.ALWAYS),
        ({"approved": True}, Choice.ONCE),  # the predecessor's default scope
        ({"approved": False, "feedback": "not on main"}, Choice.DENY),
    ],
)
async def test_the_answer_file_decides(tmp_path, answer, choice):
    seen: list[dict] = []
    thread = responder(tmp_path, [json.dumps(answer).encode()], seen)
    assert await approver(tmp_path).ask(PUSH) is choice
    thread.join(5)
    # Both files are gone once answered: a leftover answer could answer a later ask.
    assert list(tmp_path.glob("*/*.json")) == []


async def test_the_request_has_the_predecessors_fields(tmp_path):
    seen: list[dict] = []
    thread = responder(tmp_path, [b'{"approved": true}'], seen)
    await approver(tmp_path).ask(PUSH)
    thread.join(5)
    [body] = seen
    assert body["agent_id"] == "careful" and body["tool"] == "execute_command"
    assert body["pattern"] == "command:git push origin"
    assert body["risk"] == "high" and body["status"] == "pending"
    assert body["reason"] == PUSH.reason and body["preview"] == PUSH.arguments
    assert len(body["id"]) == 16 and int(body["id"], 16) >= 0
    assert body["effects"] == ["run: git push origin (in /w)"]
    assert body["response_file"] == str(tmp_path / "careful" / f"resp_{body['id']}.json")


async def test_no_answer_in_time_is_a_deny(tmp_path):
    started = time.monotonic()
    assert await approver(tmp_path, timeout=0.3).ask(PUSH) is Choice.DENY
    assert time.monotonic() - started < 3
    assert list(tmp_path.glob("*/*.json")) == []  # the request is withdrawn


@pytest.mark.parametrize(
    "answer",
    [
        b"not json at all",
        b'{"approved": "yes"}',
        b'{"approved": 1, "scope": "once"}',
        b'{"approved": true, "scope": "forever"}',
        b'{"approved": true, "scope": ["once"]}',
        b'["approved", true]',
        b"",
        b'{"approved": true, "feedback": "' + b"x" * (70 * 1024) + b'"}',  # over the bound
    ],
)
async def test_a_malformed_answer_is_a_deny(tmp_path, answer):
    thread = responder(tmp_path, [answer], [])
    started = time.monotonic()
    assert await approver(tmp_path).ask(PUSH) is Choice.DENY
    assert time.monotonic() - started < 3  # decided on the answer, not by the timeout
    thread.join(5)


async def test_a_half_written_answer_is_read_once_complete(tmp_path):
    folder = tmp_path / "careful"

    async def write_slowly() -> None:
        while not list(folder.glob("req_*.json")):
            await asyncio.sleep(0.01)
        answer = folder / next(folder.glob("req_*.json")).name.replace("req_", "resp_")
        answer.write_text('{"approved": tr')  # not atomic, as a careless script writes
        await asyncio.sleep(0.01)
        answer.write_text('{"approved": true, "scope": "session"}')

    writer = asyncio.create_task(write_slowly())
    assert await approver(tmp_path).ask(PUSH) is Choice.SESSION
    await writer


async def test_a_stale_answer_does_not_answer_a_new_ask(tmp_path):
    request_id = handshake.request_id_for(PUSH)
    (tmp_path / "careful").mkdir()
    (tmp_path / "careful" / f"resp_{request_id}.json").write_text('{"approved": true}')
    assert await approver(tmp_path, timeout=0.3).ask(PUSH) is Choice.DENY


async def test_identical_asks_take_turns(tmp_path):
    seen: list[dict] = []
    thread = responder(tmp_path, [b'{"approved": false}', b'{"approved": true}'], seen, 0.05)
    shake = approver(tmp_path)
    first, second = await asyncio.gather(shake.ask(PUSH), shake.ask(PUSH))
    thread.join(5)
    assert [first, second] == [Choice.DENY, Choice.ONCE]
    assert len(seen) == 2 and shake._turns == {}


async def test_a_hostile_agent_id_stays_inside_the_folder(tmp_path):
    request = ApprovalRequest(
        agent="../../etc",
        tool="mcp__time__get_time",
        arguments="{}",
        effects=(External("time", "get_time"),),
        risk="medium",
        reason="unknown MCP tool",
    )
    folder = tmp_path / "approvals"
    seen: list[dict] = []
    thread = responder(folder, [b'{"approved": true}'], seen)
    assert await approver(folder).ask(request) is Choice.ONCE
    thread.join(5)
    assert seen[0]["pattern"] == "mcp__time__get_time:time/get_time"
    assert [p.name for p in tmp_path.iterdir()] == ["approvals"]
    assert Path(seen[0]["response_file"]).parent.parent == folder


def test_from_config_resolves_the_folder(tmp_path):
    assert handshake.from_config(base=tmp_path).folder == tmp_path / ".massgen" / "approvals"
    shake = handshake.from_config("asks", 12, base=tmp_path)
    assert (shake.folder, shake.timeout) == (tmp_path / "asks", 12)
    assert handshake.from_config(tmp_path / "abs").folder == tmp_path / "abs"
    assert shake.operator == "human"


async def test_a_path_no_encoding_can_write_still_asks(tmp_path):
    odd = Path("/w/caf\udce9\n.txt")  # a file name that is not UTF-8, and a newline
    request = ApprovalRequest(
        agent="careful",
        tool="write_file",
        arguments="{}",
        effects=(Write(odd),),
        risk="medium",
        reason="context path",
    )
    seen: list[dict] = []
    thread = responder(tmp_path, [b'{"approved": true, "scope": "session"}'], seen)
    assert await approver(tmp_path).ask(request) is Choice.SESSION
    thread.join(5)
    assert seen[0]["effects"] == ["write /w/caf\\udce9\\n.txt"]
    assert seen[0]["pattern"] == f"write_file:{odd}"


async def test_a_cancelled_ask_withdraws_its_request(tmp_path):
    asked = asyncio.create_task(approver(tmp_path).ask(PUSH))
    while not list(tmp_path.glob("*/req_*.json")):
        await asyncio.sleep(0.01)
    asked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asked
    assert list(tmp_path.glob("*/*.json")) == []
