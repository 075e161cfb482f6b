"""Which view a run gets. No rich import: `massgen --help` must stay instant."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO


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
