"""Drive a program in a real terminal: tmux when installed, else a bare pseudo-terminal.

Both run a shell script at 80x24 and offer the same four calls: `type` (text then Enter),
`key` (Enter, C-c, C-d), `text` (what the terminal showed, scrollback included) and
`wait_for`. Every wait is bounded; a timeout fails with the screen in the message.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

WIDTH, HEIGHT = 80, 24
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-B]|[=>78MDEc])")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # all but the newline
_KEYS = {"Enter": b"\r", "C-c": b"\x03", "C-d": b"\x04"}


class Terminal:
    def type(self, text: str) -> None:
        raise NotImplementedError

    def key(self, name: str) -> None:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def wait_for(self, needle: str, timeout: float = 30.0, after: int = 0) -> int:
        """Wait until `needle` shows at or after offset `after`; return where it ends."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            found = text.find(needle, after)
            if found >= 0:
                return found + len(needle)
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} not shown within {timeout}s; screen:\n{text}")
            time.sleep(0.05)

    def wait_until(self, check, what: str, timeout: float = 30.0) -> None:
        """Wait until `check(text)` holds."""
        deadline = time.monotonic() + timeout
        while not check(self.text()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {timeout}s; screen:\n{self.text()}")
            time.sleep(0.05)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class Tmux(Terminal):
    """A private tmux server (its own socket), so a user's sessions are never touched."""

    def __init__(self, script: Path) -> None:
        self.socket = f"massgen-test-{os.getpid()}-{id(self)}"
        self._tmux("new-session", "-d", "-s", "t", "-x", str(WIDTH), "-y", str(HEIGHT), str(script))
        self._tmux("set-option", "-t", "t", "history-limit", "5000")

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)
        self.key("Enter")

    def key(self, name: str) -> None:
        self._tmux("send-keys", "-t", "t", name)

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-5000")

    def screen(self) -> str:
        """Only the visible 80x24 screen."""
        return self._tmux("capture-pane", "-p", "-t", "t")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


class Pty(Terminal):
    """A pseudo-terminal without an emulator: the output stream with escapes removed.

    It answers cursor-position requests (prompt_toolkit asks) as a terminal would.
    """

    def __init__(self, script: Path) -> None:
        import fcntl
        import pty
        import struct
        import termios

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", HEIGHT, WIDTH, 0, 0))
        self._proc = subprocess.Popen(
            [str(script)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            # The pty becomes the controlling terminal, so Ctrl-C sends SIGINT.
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self._master = master
        self._out = bytearray()
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self._master, 4096)
            except OSError:
                return
            if not data:
                return
            if b"\x1b[6n" in data:
                os.write(self._master, b"\x1b[1;1R")
            with self._lock:
                self._out += data

    def type(self, text: str) -> None:
        os.write(self._master, text.encode())
        self.key("Enter")

    def key(self, name: str) -> None:
        os.write(self._master, _KEYS[name])

    def text(self) -> str:
        with self._lock:
            raw = self._out.decode("utf-8", "replace")
        return _CONTROL.sub("", _ANSI.sub("", raw))

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait(timeout=10)
        os.close(self._master)


def open_terminal(script: Path) -> Terminal | None:
    """tmux if it is installed and starts, else a pty; None when neither works here.

    MASSGEN_TEST_TERMINAL=pty skips tmux, to exercise the fallback.
    """
    if shutil.which("tmux") and os.environ.get("MASSGEN_TEST_TERMINAL") != "pty":
        try:
            return Tmux(script)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            pass
    try:
        return Pty(script)
    except (ImportError, OSError):
        return None
