"""Which view a run gets. No rich import: `massgen --help` must stay instant."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from massgen.config.schema import MassgenConfig, UIConfig
    from massgen.permissions.approval import Approver
    from massgen.runs.turn import TeamRun


def wants_live(*, no_display: bool, stream: TextIO, env: Mapping[str, str] = os.environ) -> bool:
    """A terminal view when `stream` is a terminal that wants it; plain text otherwise.

    `--no-display`, a non-empty NO_COLOR (no-color.org) and TERM=dumb all choose plain.
    """
    if no_display or env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


# The config's `ui.display_type` values, as a display: the predecessor's names too.
CONFIGURED = {
    "textual_terminal": "tui",
    "rich_terminal": "live",
    "terminal": "plain",
    "simple": "plain",
    "plain": "plain",
    "silent": "silent",
}


def display_for(
    requested: str | None,
    *,
    ui: UIConfig | None = None,
    configured: str | None = None,
    no_display: bool = False,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    env: Mapping[str, str] = os.environ,
) -> str:
    """tui, live, plain or silent: `--display`, else the config's `ui.display_type` when
    it names one, else the app when stdin and stdout are a terminal that wants colour,
    the live view when only stdout is (keys cannot reach an app), plain text otherwise.

    A display that needs a terminal falls back to plain text without one, so a pipe never
    gets escape codes. `--no-display` means plain whatever else asks. The config's
    `ui.display_type` counts only when the file sets it: its default names no choice.
    """
    if ui is not None and "display_type" in ui.model_fields_set:
        configured = ui.display_type
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if no_display:
        return "plain"
    chosen = requested or CONFIGURED.get(configured or "")
    if chosen in ("plain", "silent"):
        return chosen
    if not wants_live(no_display=False, stream=stdout, env=env if chosen is None else {}):
        return "plain"
    if chosen is not None:
        return chosen if chosen == "live" or _is_terminal(stdin) else "live"
    return "tui" if _is_terminal(stdin) else "live"


def view_for(display: str, config: MassgenConfig, question: str = "") -> Any:
    """The terminal view for a display `display_for` chose: the app, the live view or
    plain text. Each imports its UI stack only here."""
    if display == "tui":
        from massgen.ui.tui.view import TuiView

        models = {agent.id: agent.backend.model or "" for agent in config.agents}
        return TuiView(models=models, question=question)
    if display == "live":
        from massgen.ui.live import LiveView

        return LiveView()
    from massgen.ui.plain import PlainView

    return PlainView(show_cost=True)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def give_keys(view: object, turn: TeamRun) -> None:
    """The app's keys act on `turn` (x stops one agent); other views have no such keys.
    The app's views are those that carry its approver (`approver_for`)."""
    if "massgen.ui.tui.approval" in sys.modules:
        from massgen.ui.tui.approval import AppApprover

        approver = getattr(view, "approver", None)
        if isinstance(approver, AppApprover):
            approver.app.stop_agent = turn.stop_agent


def approver_for(view: object) -> Approver | None:
    """Who answers the permission engine's asks: a person, at the prompt of a live view
    on a terminal (stdin and stdout). None otherwise: the engine's headless policy answers.

    Imports nothing heavy unless a live view or the app was made (then rich is loaded).
    """
    if "massgen.ui.tui.approval" in sys.modules:  # the app's views carry its dialogs
        from massgen.ui.tui.approval import AppApprover

        approver = getattr(view, "approver", None)
        if isinstance(approver, AppApprover):
            return approver
    if "massgen.ui.live" not in sys.modules:
        return None
    from massgen.ui.approval import terminal_approver

    return terminal_approver(view)
