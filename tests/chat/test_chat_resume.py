"""`--continue` on a session whose last turn was interrupted: the chat offers `/resume`,
which continues that turn from its journal and saves it over the interrupted one."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from chat_policy import chat_policy
from test_chat import chat_lines, history_in_requests, make_chat

from massgen.record.journal import read_journal
from massgen.sessions import Session

SLOW = "slow: tell me everything"


def decided(kinds: tuple[str, ...]) -> list[str]:
    found = []
    for journal in Path(".massgen").glob("massgen_logs/*/turn_2/events.jsonl"):
        found += [e.kind for e in read_journal(journal) if e.kind in kinds]
    return found


async def interrupt_once_two_have_decided(chat, question: str):
    """m-a and m-b give the same answer: both publish it (neither saw the other's; it is
    independent agreement, not an echo)."""
    turn = asyncio.create_task(chat.ask(question))  # m-c stalls
    for _ in range(400):
        if len(decided(("answer_published", "vote_cast"))) == 2:
            break
        await asyncio.sleep(0.025)
    os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
    return await asyncio.wait_for(turn, 10)


def test_continue_offers_to_resume_an_interrupted_turn_and_resume_finishes_it(team, fake):
    session = Session.new()
    chat = make_chat(team, session)
    asyncio.run(chat.ask("What is 6 times 7?"))
    cut = asyncio.run(interrupt_once_two_have_decided(chat, SLOW))
    assert cut.status == "interrupted"
    before = fake.requests
    fake.policy = lambda request: chat_policy(request, slow_model="nobody")

    again = make_chat(team, Session.open(session.id))
    out = chat_lines(again, ["/resume"])

    assert "turn 2 was interrupted: /resume continues it where it stopped" in out
    assert "resumed: 2 answers, 0 votes (attempt 2) of turn 2" in out
    turns = again.session.turns()
    assert [t.number for t in turns] == [1, 2]
    assert turns[1].status == "ok" and turns[1].answer == f"echo: {SLOW}"
    after = fake.requests[len(before) :]
    decided_calls = [(b["model"], b["messages"]) for b in before if b["model"] != "m-c"]
    assert decided_calls
    assert not [b for b in after if (b["model"], b["messages"]) in decided_calls]
    # The resumed turn sees turn 1 in its history, not itself.
    histories = history_in_requests(fake, SLOW)[-1]
    assert "6 times 7" in histories and "slow:" not in histories


def test_resume_without_an_interrupted_turn_says_so(team, fake):
    chat = make_chat(team)
    out = chat_lines(chat, ["What is 6 times 7?", "/resume"])
    assert "nothing to resume: the last turn was not interrupted" in out
