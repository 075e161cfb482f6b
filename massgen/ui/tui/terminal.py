"""Giving the terminal back when the app cannot: a second Ctrl-C or SIGTERM leaves with
`os._exit` (`runs/interrupts.exit_now`), which no `finally` survives, so the terminal as
it was before the app is restored here first. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import TextIO

# What Textual's driver turns on, turned off: the kitty keyboard protocol, mouse
# tracking, bracketed paste and focus events; then the normal screen, the cursor shown.
LEAVE_APP_MODE = (
    "\x1b[<u"
    "\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l"
    "\x1b[?2004l\x1b[?1004l\x1b[?7h"
    "\x1b[?1049l\x1b[?25h"
)


def saved_terminal(
    keys: TextIO | None = None, screen: TextIO | None = None
) -> Callable[[], None] | None:
    """A function that puts the terminal back as it is now (its modes, the normal
    screen); None where `keys` is no terminal or the platform has no termios."""
    try:
        import termios
    except ImportError:  # Windows
        return None
    try:
        keys_fd = (keys or sys.stdin).fileno()
        screen_fd = (screen or sys.__stderr__ or sys.stderr).fileno()
        modes = termios.tcgetattr(keys_fd)
    except (AttributeError, ValueError, OSError, termios.error):  # not a terminal
        return None

    def restore() -> None:
        with contextlib.suppress(OSError):
            os.write(screen_fd, LEAVE_APP_MODE.encode())
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(keys_fd, termios.TCSANOW, modes)

    return restore
