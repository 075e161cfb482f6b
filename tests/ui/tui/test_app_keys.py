"""`?` lists every key the app answers to, over the app; Esc, q or ? closes the list."""

from __future__ import annotations

from app_driver import SIZE, plain, until
from textual.binding import Binding

from massgen.ui.tui.keys import KeysScreen
from massgen.ui.tui.view import TuiView


async def test_question_mark_lists_every_key_and_closes_again():
    app = TuiView().app
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, KeysScreen)
        shown = plain(app.screen.query_one("#keys").content)
        for binding in app.BINDINGS:
            assert isinstance(binding, Binding)
            if binding.key.isdigit():
                continue
            assert app.get_key_display(binding) in shown, binding.key
            assert (binding.tooltip or binding.description) in shown, binding.key
        assert "1-9" in shown and "pick agent 1 to 9" in shown
        assert "stop the run, keeping what was decided" in shown
        assert "Esc" in shown and "deny a permission ask" in shown
        for key in ("escape", "q", "question_mark"):
            await pilot.press(key)
            await pilot.pause()
            assert not isinstance(app.screen, KeysScreen), key
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, KeysScreen)


async def test_q_in_the_list_closes_the_list_not_the_app():
    view = TuiView()
    app = view.app
    view.app.over = True  # after the run q quits the app; in the list it only closes it
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, KeysScreen), "the keys")
        await pilot.press("q")
        await until(lambda: not isinstance(app.screen, KeysScreen), "the keys closed")
        assert app.is_running
