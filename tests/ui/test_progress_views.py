"""A running tool call's progress line: the plain view prints it, the live view's state
line shows the latest one until the result replaces it."""

from __future__ import annotations

from io import StringIO

from rich.console import Console
from run_events import QUESTION
from shown import printed

from massgen.core import events as ev
from massgen.ui.live import render_live
from massgen.ui.model import ViewModel


def fetching() -> list[ev.AnyEvent]:
    """One agent fetching pages, reporting twice, then done."""
    return [
        ev.RunStarted(question=QUESTION, agents=("careful",), labels={"careful": "agent1"}, at=0),
        ev.AgentStarted(agent="careful", run=1, answers_in_view=(), at=0),
        ev.ToolCallStarted(agent="careful", call_id="c1", name="fetch", arguments="{}", at=1),
        ev.ToolCallProgress(agent="careful", call_id="c1", name="fetch", message="1/3 a", at=1),
        ev.ToolCallProgress(agent="careful", call_id="c1", name="fetch", message="2/3 b", at=1),
        ev.ToolCallFinished(
            agent="careful", call_id="c1", name="fetch", result="3 pages", ok=True, at=2
        ),
        ev.ToolCallProgress(agent="careful", call_id="c1", name="fetch", message="stale", at=2),
    ]


def test_the_plain_view_prints_each_progress_line():
    assert printed(fetching()[:-1]).splitlines()[1:] == [
        "[careful] ⚙ fetch({})",
        "[careful] … fetch: 1/3 a",
        "[careful] … fetch: 2/3 b",
        "[careful] ✓ fetch 0.00s: 3 pages",
    ]


def state_line(count: int) -> str:
    model = ViewModel()
    for event in fetching()[:count]:
        model.apply(event)
    console = Console(file=StringIO(), width=80, height=12, color_system=None)
    console.print(render_live(model, width=80, height=12, elapsed=1))
    return console.file.getvalue().splitlines()[2]


def test_the_live_state_line_shows_the_latest_progress_until_the_result():
    assert state_line(3).startswith("│ ⚙ fetch…  ")
    assert state_line(4).startswith("│ ⚙ fetch · 1/3 a…  ")
    assert state_line(5).startswith("│ ⚙ fetch · 2/3 b…  ")
    assert state_line(6).startswith("│ ⋯ thinking  ")
    assert state_line(7).startswith("│ ⋯ thinking  ")  # a line after the result is dropped
