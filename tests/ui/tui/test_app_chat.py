"""Chat in the app: the plain chat's loop (`massgen.chat`) with the app as its prompt,
views and transcript, against the loopback fake of the chat tests (its second answer
needs the first turn in its history). What is checked is what the user sees: the input
box, the final answer, the Chat tab's transcript, the status of a cancelled turn."""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import pytest
from app_driver import SIZE, chat_team_file, fold_text, text_of, until
from chat_policy import chat_policy
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Collapsible, TabbedContent

from massgen.api import load
from massgen.chat.in_app import AppChat, AppReader, drive
from massgen.runs.turn import warm_up
from massgen.sessions import Session
from massgen.testing.fake_provider import FakeProvider
from massgen.ui.tui.chat import ChatApp, PromptInput, Transcript, chat_models
from massgen.ui.tui.steering import StopDialog

pytestmark = pytest.mark.usefixtures("in_tmp")

User = Callable[[Pilot], Awaitable[None]]


def new_chat(config: Path, *, logs: bool = False, session: Session | None = None) -> AppChat:
    loaded = load(str(config))
    app = ChatApp(chat_models(loaded.config))
    return AppChat(loaded, session or Session.new(), app=app, logs=logs)


async def run(chat: AppChat, user: User) -> None:
    """The chat in the headless app with `user` at the keys; a failed check in `user`
    fails the test (Textual would only close the app)."""
    failures: list[BaseException] = []

    async def checked(pilot: Pilot) -> None:
        try:
            await user(pilot)
        except BaseException as error:
            failures.append(error)
            chat.app.exit()

    # As the CLI does: the turn's imports (the SDKs) load in a thread before the chat
    # starts, not in the app's loop, where a loaded machine would stall the keys for long.
    warm = partial(warm_up, chat.loaded.config)
    await drive(chat, AppReader(chat.app), warm=warm, headless=True, size=SIZE, auto_pilot=checked)
    if failures:
        raise failures[0]


def prompt(app: ChatApp) -> PromptInput:
    return app.query_one(PromptInput)


async def ready_for_line(app: ChatApp) -> None:
    # Generous: the first waits for the turn's imports, slow on a loaded machine.
    ready = lambda: not prompt(app).disabled and app.waiting is not None  # noqa: E731
    await until(ready, "the input box", timeout=120)


async def send(pilot: Pilot, line: str) -> None:
    """Type `line` into the input box, as a person would, and send it."""
    app = pilot.app
    assert isinstance(app, ChatApp)
    await ready_for_line(app)
    await pilot.press(*line, "enter")


async def leave(pilot: Pilot) -> None:
    """`/quit`: its Enter closes the app, so nothing waits for the screen after it."""
    app = pilot.app
    assert isinstance(app, ChatApp)
    await ready_for_line(app)
    await pilot.press(*"/quit")
    app.simulate_key("enter")


def turns_shown(app: ChatApp) -> list[Collapsible]:
    return list(app.query_one(Transcript).query(Collapsible))


def notes(app: ChatApp) -> str:
    return "\n".join(
        str(widget.content) for widget in app.query_one(Transcript).query("Transcript > Static")
    )


async def test_two_turns_a_command_history_and_the_first_turn_again(tmp_path):
    seen: dict[str, object] = {}

    async def user(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, ChatApp)
        await ready_for_line(app)
        assert app.query_one(TabbedContent).active == "chat"
        assert "massgen chat · 3 agent(s): careful, balanced, creative" in notes(app)
        assert text_of(app, "#question") == "massgen chat"

        await send(pilot, "What is 6 times 7?")
        await until(lambda: len(turns_shown(app)) == 1, "turn 1 in the transcript")
        await ready_for_line(app)
        assert app.query_one(TabbedContent).active == "final"
        assert text_of(app, "#final-answer") == "6 times 7 is 42."
        assert "winner: " in text_of(app, "#outcome")

        # The second turn needs the first in its history: the fake answers 50 only then.
        await send(pilot, "Add 8 to that.")
        await until(lambda: len(turns_shown(app)) == 2, "turn 2 in the transcript")
        assert text_of(app, "#question") == "massgen · Add 8 to that."
        await ready_for_line(app)
        assert text_of(app, "#final-answer") == "42 + 8 = 50."
        # The board holds this turn's answers only (its labels start again at agent1.1).
        answers = [f for f in app.query_one("#board").query(Collapsible) if " · " in f.title]
        assert len(answers) == 3 and all("42 + 8 = 50." in fold_text(a) for a in answers)

        # ↑ and ↓ walk the lines sent; the line being typed comes back at the end.
        await pilot.press(*"half")
        recalled = []
        for key in ("up", "up", "up", "down", "down"):
            await pilot.press(key)
            recalled.append(prompt(app).value)
        seen["recalled"] = recalled
        for _ in "half":
            await pilot.press("backspace")

        # A slash command: its report in the Chat tab.
        await send(pilot, "/status")
        await until(lambda: "2 turn(s) saved" in notes(app), "the /status report")
        assert app.query_one(TabbedContent).active == "chat"

        # Esc leaves the input box for the app's keys; i comes back to it.
        await pilot.press("escape", "a")
        seen["tab after esc a"] = app.query_one(TabbedContent).active
        await pilot.press("i", "c")
        seen["typed after i"] = prompt(app).value
        await pilot.press("backspace")

        # The earlier turn, folded under the newest, opens to its question and answer.
        first, second = turns_shown(app)
        seen["titles"] = (first.title, second.title)
        seen["folded"] = (first.collapsed, second.collapsed)
        first.query_one("CollapsibleTitle").focus()
        await pilot.press("enter")
        await pilot.pause()
        seen["opened"] = (first.collapsed, fold_text(first))
        await leave(pilot)

    with FakeProvider(chat_policy) as fake:
        chat = new_chat(chat_team_file(tmp_path, fake.base_url))
        await run(chat, user)

    assert seen["recalled"] == [
        "Add 8 to that.",
        "What is 6 times 7?",
        "What is 6 times 7?",  # the oldest line stays put
        "Add 8 to that.",
        "half",
    ]
    assert seen["tab after esc a"] == "answers" and seen["typed after i"] == "c"
    assert seen["titles"] == ("turn 1 · What is 6 times 7?", "turn 2 · Add 8 to that.")
    assert seen["folded"] == (True, False)
    collapsed, shown = seen["opened"]
    assert not collapsed and "› What is 6 times 7?" in shown and "6 times 7 is 42." in shown
    # The session has both turns, as the plain chat saves them.
    saved = [(t.number, t.question, t.answer) for t in chat.session.turns()]
    assert saved == [
        (1, "What is 6 times 7?", "6 times 7 is 42."),
        (2, "Add 8 to that.", "42 + 8 = 50."),
    ]
    # After the app: both turns on the normal screen, then the farewell.
    out = io.StringIO()
    chat.print_after(Console(file=out, width=100, color_system=None))
    printed = out.getvalue()
    assert printed.index("› What is 6 times 7?") < printed.index("42 + 8 = 50.")
    assert printed.rstrip().endswith(
        f"session {chat.session.id} saved · `massgen --continue` resumes it"
    )


async def test_ctrl_c_stops_only_the_turn_and_resume_finishes_it(tmp_path):
    seen: dict[str, object] = {}
    fake = FakeProvider(chat_policy)

    async def user(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, ChatApp)
        await send(pilot, "slow: tell me everything")  # m-c stalls: the turn never ends alone
        await until(lambda: app.model.state.agent("careful").answers, "a first answer")
        assert prompt(app).disabled and "Ctrl-C stops this turn" in prompt(app).placeholder
        await pilot.press("ctrl+c")
        await until(lambda: turns_shown(app), "the stopped turn in the transcript")
        await ready_for_line(app)
        seen["note"] = notes(app)
        seen["outcome"] = text_of(app, "#outcome")
        seen["turn"] = fold_text(turns_shown(app)[0])
        # The chat goes on: /resume continues the stopped turn, m-c answering now.
        fake.policy = lambda request: chat_policy(request, slow_model="nobody")
        await send(pilot, "/resume")
        await until(lambda: len(turns_shown(app)) == 2, "the resumed turn")
        await ready_for_line(app)
        seen["resumed"] = notes(app)
        seen["next"] = (turns_shown(app)[1].title, text_of(app, "#final-answer"))
        await pilot.press("ctrl+c")  # at the prompt: the chat ends

    with fake:
        chat = new_chat(chat_team_file(tmp_path, fake.base_url), logs=True)
        await run(chat, user)

    assert "turn 1 cancelled; kept the best answer so far (saved, marked interrupted)" in str(
        seen["note"]
    )
    assert "best answer so far" in str(seen["outcome"])
    assert "echo: slow: tell me everything" in str(seen["turn"]) and "interrupted" in str(
        seen["turn"]
    )
    assert "of turn 1" in str(seen["resumed"]) and "resumed: " in str(seen["resumed"])
    assert seen["next"] == ("turn 1 · slow: tell me everything", "echo: slow: tell me everything")
    assert [(t.number, t.status) for t in chat.session.turns()] == [(1, "ok")]


async def test_x_in_a_chat_turn_stops_one_agent_and_the_turn_ends_without_it(tmp_path):
    seen: dict[str, object] = {}

    async def user(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, ChatApp)
        await send(pilot, "slow: tell me everything")  # creative (m-c) stalls
        state = app.model.state
        await until(lambda: state.agent("careful").answers and state.agent("balanced").answers,
                    "the two first answers")  # fmt: skip
        await pilot.press("3", "x")
        await until(lambda: isinstance(app.screen, StopDialog), "the stop dialog")
        await pilot.press("up", "enter")
        await until(lambda: turns_shown(app), "the turn in the transcript")
        await ready_for_line(app)
        seen["outcome"] = text_of(app, "#outcome")
        await leave(pilot)

    with FakeProvider(chat_policy) as fake:
        chat = new_chat(chat_team_file(tmp_path, fake.base_url))
        await run(chat, user)

    assert "stopped by you: creative" in str(seen["outcome"])
    ((number, status, answer),) = [(t.number, t.status, t.answer) for t in chat.session.turns()]
    assert (number, status) == (1, "degraded") and answer == "echo: slow: tell me everything"
