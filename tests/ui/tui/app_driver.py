"""A team on the loopback fake, watched by the app headless: the helpers the app's tests
share. What a widget shows is read from the widget (its text, its Markdown, its title)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.text import Text
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from massgen.api import TeamRun, load
from massgen.ui.choice import give_keys
from massgen.ui.tui.app import TeamApp
from massgen.ui.tui.view import TuiView
from massgen.ui.tui.widgets import MarkdownText

AGENTS = ("careful", "balanced", "creative")
QUESTION = "What is 6 times 7?"
SIZE = (120, 36)


def team_file(folder: Path, base_url: str, models: tuple[str, ...] = AGENTS) -> Path:
    agents = [
        {"id": name, "backend": {"type": "chatcompletion", "model": name, "base_url": base_url}}
        for name in models
    ]
    path = folder / "team.yaml"
    path.write_text(yaml.safe_dump({"agents": agents}))
    return path


def chat_team_file(folder: Path, base_url: str) -> Path:
    """The chat tests' team (`tests/chat/conftest.py`): three models, m-c the slow one;
    no early agreement, so every turn has its votes."""
    models = (("careful", "m-a"), ("balanced", "m-b"), ("creative", "m-c"))
    agents = [
        {"id": name, "backend": {"type": "chatcompletion", "model": model, "base_url": base_url}}
        for name, model in models
    ]
    path = folder / "team.yaml"
    path.write_text(yaml.safe_dump({"agents": agents, "orchestrator": {"agreement": "none"}}))
    return path


def team_run(config: Path, view: TuiView) -> TeamRun:
    """The turn as the CLI makes it: the app answers its asks, its keys act on it."""
    turn = TeamRun(load(str(config)), QUESTION, sinks=[view], approver=view.approver, logs=False)
    give_keys(view, turn)
    return turn


def new_view(models: tuple[str, ...] = AGENTS) -> TuiView:
    return TuiView(models={name: f"model-{name}" for name in models})


def text_of(app: TeamApp, selector: str) -> str:
    widget = app.query_one(selector)
    if isinstance(widget, Markdown | MarkdownText):
        return widget.source
    assert isinstance(widget, Static)
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


def plain(content: object, width: int = SIZE[0]) -> str:
    """A widget's content as the terminal would show it, without styles."""
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(content)
    return console.file.getvalue()  # type: ignore[attr-defined]


def agent_entries(app: TeamApp) -> list[str]:
    options = app.query_one("#agents").options  # type: ignore[attr-defined]
    return [o.prompt.plain for o in options]


def shown_in(app: TeamApp, selector: str) -> str:
    """The text of every block under a container, in order (folded ones too)."""
    return _blocks_text(app.query_one(selector).query("Static, Markdown"))


def folds(app: TeamApp, selector: str) -> list[Collapsible]:
    return list(app.query_one(selector).query(Collapsible))


def fold_text(fold: Collapsible) -> str:
    """What opening the card shows (not its title)."""
    return _blocks_text(fold.query("Contents > Static, Contents > Markdown"))


def _blocks_text(widgets: Iterable[Widget]) -> str:
    """The text of text blocks (Static, Markdown), one a line, in order."""
    parts = []
    for widget in widgets:
        if isinstance(widget, Markdown | MarkdownText):
            parts.append(widget.source)
        elif isinstance(widget, Static):
            content = widget.content
            parts.append(content.plain if isinstance(content, Text) else str(content))
    return "\n".join(parts)


async def until(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """Poll `check` on the running loop until it holds; fail with `what`."""
    async with asyncio.timeout(timeout):
        while not (found := check()):
            await asyncio.sleep(0.05)
    assert found, what
    return found


def quit_with_q(pilot: Pilot) -> None:
    """Press q to close the app, from an auto-pilot. `pilot.press` waits for the app to
    settle after the key, which never comes once the key has closed it, and `run_async`
    waits for its auto-pilot: pressing the last key that way hangs the test at random."""
    pilot.app.simulate_key("q")
