"""What the person does to a run from the app beyond watching it: stop one agent, and keep
the final answer (copy it, save it to a file).

Stopping asks first, the pointer on "keep it working", as a permission ask starts on
deny: a stray Enter never stops an agent. Saving never overwrites a file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from massgen.permissions.describe import visible
from massgen.ui.tui.approval import Dialog

if TYPE_CHECKING:
    from massgen.ui.tui.app import TeamApp

StopAgent = Callable[[str], "str | None"]  # the run's `stop_agent`: None, or why not

ANSWER_FILE = "massgen-answer.md"  # where "save" offers to write, in the working directory


class StopDialog(Dialog):
    """Stop this agent? The pointer starts on keeping it."""

    safe = False

    def __init__(self, agent_name: str) -> None:
        super().__init__()
        self.agent_name = agent_name

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"stop {visible(self.agent_name, 120)}?", style="bold yellow"))
            yield Static(
                "Its call in flight is cancelled and the team goes on without it for the "
                "rest of the run. Its answers stay on the board and may still win."
            )
            yield Static(Text("↑/↓ then Enter; Esc keeps it working", style="dim"))
            yield OptionList(Option("stop it", id="stop"), Option("keep it working", id="keep"))

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = 1  # keep
        choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id == "stop")


class SaveDialog(Dialog):
    """Where to save the final answer: a path, offered as a free name in the directory."""

    safe = None

    def __init__(self, offered: str) -> None:
        super().__init__()
        self.offered = offered

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("save the final answer", style="bold cyan"))
            note = "Enter saves (an existing file is never overwritten); Esc cancels"
            yield Static(Text(note, style="dim"))
            yield Input(self.offered, id="path")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)


def ask_to_stop(app: TeamApp, agent: str, name: str, stop: StopAgent) -> None:
    """The dialog, then the stop; what happened as a toast."""

    def answered(confirmed: bool | None) -> None:
        if not confirmed:
            return
        why_not = stop(agent)
        if why_not is None:
            app.notify(f"Stopped {name}; the team goes on without it.")
        else:
            app.notify(f"Not stopped: {why_not}.", severity="warning")

    app.push_screen(StopDialog(name), answered)


def free_name(directory: Path, name: str = ANSWER_FILE) -> Path:
    """`name` in `directory`, or `stem-2.md`, `stem-3.md`, ... when it is taken (bounded)."""
    path = directory / name
    stem, suffix = path.stem, path.suffix
    for n in range(2, 1000):
        if not path.exists():
            return path
        path = directory / f"{stem}-{n}{suffix}"
    return path


def save_answer(app: TeamApp, answer: str, directory: Path) -> None:
    """The dialog, then the file written (never over an existing one); a toast says where."""

    def answered(chosen: str | None) -> None:
        if chosen is None:
            return
        path = (directory / Path(chosen).expanduser()).resolve()
        try:
            with path.open("x", encoding="utf-8") as file:
                file.write(answer if answer.endswith("\n") else answer + "\n")
        except FileExistsError:
            app.notify(f"{path} exists: not overwritten.", severity="warning")
        except OSError as error:
            app.notify(f"Could not save to {path}: {error.strerror or error}.", severity="error")
        else:
            app.notify(f"Saved the final answer to {path}.")

    app.push_screen(SaveDialog(free_name(directory).name), answered)
