"""Which view a run gets. No rich import: `massgen --help` must stay instant."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from massgen.permissions.approval import Approver


def wants_live(*, no_display: bool, stream: TextIO, env: Mapping[str, str] = os.environ) -> bool:
    """The live view when `stream` is a terminal that wants it; plain text otherwise.

    `--no-display`, a non-empty NO_COLOR (no-color.org) and TERM=dumb all choose plain.
    """
    if no_display or env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def approver_for(view: object) -> Approver | None:
    """Who answers the permission engine's asks: a person, at the prompt of a live view
    on a terminal (stdin and stdout). None otherwise: the engine's headless policy answers.

    Imports nothing heavy unless a live view was made (then rich is loaded already).
    """
    if "massgen.ui.live" not in sys.modules:
        return None
    from massgen.ui.approval import terminal_approver

    return terminal_approver(view)
