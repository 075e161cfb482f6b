"""`coordination.broadcast: human`: an agent's question at the live view's prompt, answered
in words (keys from a pipe, the real questionary prompt), skipped with an empty line, or
not answered in time; the panels come back after each."""

from __future__ import annotations

import asyncio
import io

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from run_events import coordination

from massgen.coordination.aids.broadcast import Person
from massgen.ui.approval import TerminalApprover
from massgen.ui.live import LiveView

QUESTION = "Which site should the scraper read?\nIt needs titles and dates."


@pytest.fixture
def keys():
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        yield pipe.send_text


def live_view(screen: io.StringIO) -> LiveView:
    view = LiveView(Console(file=screen, force_terminal=True, width=100, height=30))
    for event in coordination():
        view(event)
    return view


async def until_shown(screen: io.StringIO, text: str) -> None:
    async with asyncio.timeout(5):
        while text not in screen.getvalue():
            await asyncio.sleep(0.01)


async def test_the_person_answers_in_words_and_the_panels_come_back(keys):
    screen = io.StringIO()
    view = live_view(screen)
    approver = TerminalApprover(view)
    assert isinstance(approver, Person)
    asked = asyncio.create_task(approver.answer_question("careful", QUESTION, 30))
    await until_shown(screen, "question from careful")
    assert view._live is None  # nothing draws over the prompt
    keys("news.example.org\r")
    assert await asked == "news.example.org"
    assert "It needs titles and dates." in screen.getvalue()
    assert view._live is not None
    view.close()


async def test_an_empty_line_or_no_answer_in_time_is_none(keys):
    screen = io.StringIO()
    view = live_view(screen)
    approver = TerminalApprover(view)
    asked = asyncio.create_task(approver.answer_question("careful", QUESTION, 30))
    await until_shown(screen, "question from careful")
    keys("\r")
    assert await asked is None
    assert await approver.answer_question("careful", QUESTION, 0.2) is None
    assert "no answer within 0.2s: skipped" in screen.getvalue()
    view.close()
