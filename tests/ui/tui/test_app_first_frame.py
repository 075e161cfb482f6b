"""The app's first frame comes before the team's turn starts: the turn's imports and its
first events run in the app's event loop and would hold the screen back. The imports are
warmed in a thread meanwhile, so the app answers keys while they load."""

from __future__ import annotations

import threading

from app_driver import QUESTION, SIZE, quit_with_q, text_of, until
from textual.pilot import Pilot

from massgen.ui.tui.keys import KeysScreen
from massgen.ui.tui.view import TuiView


async def test_the_first_frame_is_drawn_before_the_turn_starts_and_keys_work_meanwhile():
    view = TuiView(question=QUESTION)
    app = view.app
    order: list[tuple[str, object]] = []
    keys_shown = threading.Event()

    def warm() -> None:  # the turn's imports: the app must keep answering meanwhile
        order.append(("warm", app.drawn.is_set()))
        order.append(("keys while warming", keys_shown.wait(timeout=20)))

    async def turn() -> str:
        order.append(("turn starts under", text_of(app, "#question")))
        return "the turn's result"

    async def user(pilot: Pilot) -> None:
        await until(lambda: order, "warming")
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, KeysScreen), "the keys over the app")
        keys_shown.set()
        await pilot.press("escape")
        await until(lambda: app.over, "the turn's end")
        quit_with_q(pilot)

    result = await view.drive(turn(), warm=warm, headless=True, size=SIZE, auto_pilot=user)
    assert result == "the turn's result"
    assert order == [
        ("warm", True),
        ("keys while warming", True),
        ("turn starts under", f"massgen · {QUESTION}"),
    ]
