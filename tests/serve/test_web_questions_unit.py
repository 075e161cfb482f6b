"""The web page's person (`WebQuestions`, held by the `WebApprover`): an agent's question
waits until answered, skipped, expired or the run's end; the answer is bounded."""

from __future__ import annotations

import asyncio

import pytest

from massgen.coordination.aids import broadcast
from massgen.serve.approvals import WebApprover
from massgen.serve.questions import AnswerTooLong, QuestionClosed, UnknownQuestion, WebQuestions

QUESTION = "Which colour?\nRed or <b>blue</b>\x1b[2J"


async def opened(book: WebQuestions, timeout: float = 30) -> tuple[asyncio.Task[str | None], str]:
    before = len(book.open_questions())
    task = asyncio.create_task(book.answer_question("careful", QUESTION, timeout))
    for _ in range(100):
        if len(book.open_questions()) > before:
            return task, book.open_questions()[-1].id
        await asyncio.sleep(0)
    raise AssertionError("the question never opened")


def outcomes(book: WebQuestions) -> list[str]:
    return [q.outcome for q in book.closed_questions()]


async def test_the_web_approver_is_a_person_and_the_answer_is_the_text():
    approver = WebApprover()
    assert isinstance(approver, broadcast.Person)
    task = asyncio.create_task(approver.answer_question("careful", QUESTION, 30))
    for _ in range(100):
        if approver.questions.open_questions():
            break
        await asyncio.sleep(0)
    (shown,) = [q.to_dict() for q in approver.questions.open_questions()]
    assert shown["agent"] == "careful" and len(shown["id"]) >= 20
    assert shown["question"] == "Which colour?\nRed or <b>blue</b>\\x1b[2J"  # escaped, lines kept
    assert shown["max_chars"] == broadcast.ANSWER_CHARS
    approver.questions.answer(shown["id"], "Blue.")
    assert await task == "Blue."
    assert approver.questions.open_questions() == []
    assert outcomes(approver.questions) == ["answered"]


async def test_skip_twice_and_unknown():
    book = WebQuestions()
    task, qid = await opened(book)
    with pytest.raises(UnknownQuestion):
        book.answer("guessed", "x")
    book.answer(qid, None)
    with pytest.raises(QuestionClosed, match="answered already"):
        book.answer(qid, "late")  # before the asker has woken up
    assert await task is None
    with pytest.raises(QuestionClosed, match="skipped"):
        book.answer(qid, "later")
    assert outcomes(book) == ["skipped"]


async def test_an_answer_over_the_limit_is_refused_and_the_question_stays_open():
    book = WebQuestions()
    task, qid = await opened(book)
    with pytest.raises(AnswerTooLong, match="4,001 characters; at most 4,000"):
        book.answer(qid, "x" * (broadcast.ANSWER_CHARS + 1))
    assert [q.id for q in book.open_questions()] == [qid]
    book.answer(qid, "x" * broadcast.ANSWER_CHARS)
    assert await task == "x" * broadcast.ANSWER_CHARS


async def test_no_answer_in_the_agents_time_is_none_and_expired():
    book = WebQuestions(timeout_s=30)
    task, _ = await opened(book, timeout=0.05)
    assert await task is None
    assert outcomes(book) == ["expired"] and book.open_questions() == []


async def test_the_broadcast_deadline_cancelling_the_wait_is_expired_too():
    book = WebQuestions()
    task, _ = await opened(book, timeout=0.5)
    await asyncio.sleep(0.1)  # within LATE_S of its deadline
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcomes(book) == ["expired"]


async def test_the_runs_end_closes_open_questions_and_refuses_new_ones():
    book = WebQuestions()
    task, _ = await opened(book, timeout=60)
    book.close()
    assert await task is None
    assert await book.answer_question("careful", "again?", 60) is None
    assert outcomes(book) == ["ended"]


async def test_open_questions_are_bounded():
    book = WebQuestions(max_open=2)
    tasks = [(await opened(book))[0] for _ in range(2)]
    assert await book.answer_question("careful", "a third?", 60) is None  # at once
    assert len(book.open_questions()) == 2
    book.close()
    assert await asyncio.gather(*tasks) == [None, None]
