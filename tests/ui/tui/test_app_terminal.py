"""Terminal manners in the app: at 80x24 and after resizes the status bar, the tabs and
the selected agent's stream stay on screen."""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Tab

from massgen.core import events as ev
from massgen.ui.tui.app import TeamApp
from massgen.ui.tui.view import TuiView

AGENTS = tuple(f"agent{n}" for n in range(1, 9))


def streaming(view: TuiView, words: int) -> None:
    view(ev.RunStarted(question="What is 6 times 7?", agents=AGENTS, labels={}))
    for agent in AGENTS:
        view(ev.AgentStarted(agent=agent, run=1, answers_in_view=()))
        view(ev.FinalTextDelta(agent=agent, text=f"{agent} says " + "word " * words))


def on_screen(app: TeamApp, widget: Widget) -> bool:
    """Shown whole: inside the terminal and not covered by its neighbours' layout."""
    region = widget.region
    width, height = app.size
    return region.area > 0 and Region(0, 0, width, height).contains_region(region)


def assert_usable(app: TeamApp) -> None:
    width, height = app.size
    for selector in ("#status", "#question", "#agent-title", "#agents", "#stream-view"):
        assert on_screen(app, app.query_one(selector)), f"{selector} at {width}x{height}"
    tabs = list(app.query(Tab))
    assert len(tabs) == 4 and all(on_screen(app, tab) for tab in tabs), (width, height)
    assert app.query_one("#status").region.y == height - 2  # above the footer's keys
    stream = app.query_one("#stream-view")
    assert stream.region.height >= 3 and stream.region.width >= 30


async def test_the_app_is_usable_at_80x24_and_after_resizes():
    view = TuiView()
    app = view.app
    async with app.run_test(size=(80, 24)) as pilot:
        streaming(view, 400)
        await pilot.pause(0.3)
        assert_usable(app)
        for size in ((60, 18), (200, 60), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause(0.3)
            assert app.size == size
            assert_usable(app)
        assert app.is_running  # nothing raised: an error in a handler ends the app
