"""`?` in the app: every key it answers to, in a dialog over it.

The rows come from the app's own bindings (so a key added there is listed here), with
the keys its widgets answer to (the agent list, the cards, the dialogs) after them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.app import App

# Keys the widgets answer to; not the app's bindings, so listed by hand.
WIDGET_KEYS = (
    ("↑ ↓", "move in the agent list or a dialog's choices"),
    ("Tab", "move between the agent list and the tabs"),
    ("Enter", "open or close the card under the cursor; answer a dialog"),
    ("Esc", "deny a permission ask, skip a question, close this list"),
)

KEYS_CSS = """
KeysScreen { align: center middle; }
KeysScreen > VerticalScroll {
    width: 72; max-width: 100%; height: auto; max-height: 100%;
    border: round $primary; background: $surface; padding: 0 1;
}
"""


def key_rows(app: App[Any]) -> list[tuple[str, str]]:
    """(keys, what they do) for every binding of `app`, a run of digit keys as one row."""
    rows: list[tuple[str, str]] = []
    digits = []
    for binding in app.BINDINGS:
        assert isinstance(binding, Binding)
        if binding.key.isdigit():
            digits.append(binding.key)
            continue
        rows.append((app.get_key_display(binding), binding.tooltip or binding.description))
    if digits:
        rows.append((f"{digits[0]}-{digits[-1]}", "pick agent 1 to 9"))
    return rows + list(WIDGET_KEYS)


def keys_table(rows: list[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for keys, meaning in rows:
        table.add_row(Text(keys), Text(meaning))
    return table


class KeysScreen(ModalScreen[None]):
    """The keys, until Esc, q or ? closes it."""

    DEFAULT_CSS = KEYS_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "close", priority=True),
    ]

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("keys", style="bold"))
            yield Static(keys_table(self.rows), id="keys")
            yield Static(Text("Esc, q or ? closes this", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
