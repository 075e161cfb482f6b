"""The web page's approver: an answer, a timeout, the run's end, a second answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from massgen.core.effects import Run
from massgen.permissions.approval import ApprovalRequest, Choice
from massgen.permissions.engine import Call, Engine
from massgen.permissions.ledger import Ledger, read
from massgen.permissions.risk import Zones
from massgen.serve.approvals import AlreadyAnswered, NotAnswered, UnknownAsk, WebApprover

REQUEST = ApprovalRequest(
    agent="alice",
    tool="execute_command",
    arguments='{"command": "touch made.txt\\u001b[2J"}',
    effects=(Run(("/bin/sh", "-c", "touch made.txt\x1b[2J"), Path("/ws")),),
    risk="medium",
    reason="command risk medium",
    details=("run `touch made.txt`",),
)


async def opened(approver: WebApprover) -> tuple[asyncio.Task[Choice], str]:
    task = asyncio.create_task(approver.ask(REQUEST))
    for _ in range(100):
        if approver.open_asks():
            return task, approver.open_asks()[0].id
        await asyncio.sleep(0)
    raise AssertionError("the ask never opened")


async def test_an_answer_is_the_choice_and_the_ask_closes():
    changes: list[int] = []
    approver = WebApprover(lambda: changes.append(len(approver.open_asks())))
    task, ask_id = await opened(approver)
    approver.answer(ask_id, Choice.ONCE)
    assert await task is Choice.ONCE
    assert approver.open_asks() == [] and changes == [1, 0]


async def test_what_the_page_is_shown_is_escaped_and_names_the_choices():
    approver = WebApprover()
    task, _ = await opened(approver)
    shown = approver.open_asks()[0].to_dict()
    assert shown["effects"] == ["run: /bin/sh -c 'touch made.txt\\x1b[2J' (in /ws)"]
    assert (shown["agent"], shown["tool"], shown["risk"]) == ("alice", "execute_command", "medium")
    assert [c["value"] for c in shown["choices"]] == ["once", "session", "always", "deny"]
    assert len(shown["id"]) >= 20  # random: not guessable from another run
    task.cancel()


async def test_a_second_answer_is_refused_and_the_first_stands():
    approver = WebApprover()
    task, ask_id = await opened(approver)
    approver.answer(ask_id, Choice.DENY)
    with pytest.raises(AlreadyAnswered):
        approver.answer(ask_id, Choice.ALWAYS)
    assert await task is Choice.DENY
    with pytest.raises(AlreadyAnswered):  # also after the ask has closed
        approver.answer(ask_id, Choice.ONCE)
    with pytest.raises(UnknownAsk):
        approver.answer("no-such-id", Choice.ONCE)


async def test_no_answer_in_time_raises_and_the_id_is_then_unknown():
    approver = WebApprover(timeout_s=0.05)
    task, ask_id = await opened(approver)
    with pytest.raises(NotAnswered, match=r"no answer from the web page within 0\.05 s"):
        await task
    assert approver.open_asks() == []
    with pytest.raises(UnknownAsk):
        approver.answer(ask_id, Choice.ONCE)


async def test_the_run_ending_closes_open_asks_and_refuses_new_ones():
    approver = WebApprover()
    task, _ = await opened(approver)
    approver.close()
    with pytest.raises(NotAnswered, match="the run ended"):
        await task
    with pytest.raises(NotAnswered, match="the run has ended"):
        await approver.ask(REQUEST)


async def test_a_cancelled_run_leaves_no_open_ask():
    approver = WebApprover()
    task, ask_id = await opened(approver)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert approver.open_asks() == []
    with pytest.raises(UnknownAsk):
        approver.answer(ask_id, Choice.ONCE)


async def test_too_many_open_asks_are_refused_at_once():
    approver = WebApprover(max_open=1)
    task, _ = await opened(approver)
    with pytest.raises(NotAnswered, match="1 asks are already waiting"):
        await approver.ask(REQUEST)
    task.cancel()


async def decided(approver: WebApprover, tmp_path: Path, answer: Choice | None):
    """The engine's decision and ledger line on a medium-risk command in the workspace."""
    ledger = tmp_path / "permissions.jsonl"
    engine = Engine(approver=approver, ledger=Ledger(ledger))
    run = Run(("touch", "made.txt"), tmp_path)
    call = Call("alice", "execute_command", (run,), Zones(workspace=tmp_path), call_id="c1")
    decision = asyncio.create_task(engine.decide(call))
    for _ in range(100):
        if approver.open_asks() or decision.done():
            break
        await asyncio.sleep(0)
    if answer is not None:
        approver.answer(approver.open_asks()[0].id, answer)
    return await decision, read(ledger)[-1]


async def test_the_engine_records_a_persons_choice_as_human(tmp_path):
    decision, record = await decided(WebApprover(), tmp_path, Choice.ONCE)
    assert decision.allowed and decision.operator == "human"
    assert (record["decision"], record["operator"], record["choice"]) == ("allow", "human", "once")
    decision, record = await decided(WebApprover(), tmp_path, Choice.DENY)
    assert not decision.allowed and (record["operator"], record["choice"]) == ("human", "deny")


async def test_the_engine_makes_a_timeout_a_deny_that_says_why(tmp_path):
    decision, record = await decided(WebApprover(timeout_s=0.05), tmp_path, None)
    assert not decision.allowed and record["decision"] == "deny"
    assert "no answer from the web page within 0.05 s" in record["reason"]
