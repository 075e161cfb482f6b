"""A real terminal for a child process: a pty, keys in, the screen's text out.

with Terminal([massgen, "--setup"], env=env, cwd=tmp) as term:
    term.expect("How many agents?")
    term.send(DOWN, ENTER)
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Sequence

ENTER, SPACE, DOWN, UP, CTRL_C = "\r", " ", "\x1b[B", "\x1b[A", "\x03"
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-B]|[=>])")


class Terminal:
    def __init__(
        self, argv: Sequence[str], *, env: dict[str, str], cwd: str, rows: int = 50, cols: int = 160
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,  # the pty becomes its controlling terminal
            close_fds=True,
        )
        os.close(slave)
        self._master = master
        self._raw = bytearray()
        self._lock = threading.Lock()
        self._seen = 0  # screen text already matched by `expect`
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=5)
        os.close(self._master)

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 65536)
            except OSError:  # the child closed the pty
                return
            if not data:
                return
            with self._lock:
                self._raw += data

    @property
    def text(self) -> str:
        """Everything shown so far, without escape sequences."""
        with self._lock:
            raw = bytes(self._raw)
        return _ANSI.sub("", raw.decode("utf-8", errors="replace")).replace("\r", "")

    def expect(self, needle: str, timeout: float = 30.0) -> str:
        """Wait until `needle` appears after the previous match; return the text up to it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text
            found = text.find(needle, self._seen)
            if found != -1:
                self._seen = found + len(needle)
                return text[:found]
            if self.process.poll() is not None and self.text == text:
                break
            time.sleep(0.05)
        raise AssertionError(f"did not see {needle!r}; the screen:\n{self.text[-3000:]}")

    def send(self, *keys: str) -> None:
        for key in keys:
            os.write(self._master, key.encode())
            time.sleep(0.15)  # let prompt_toolkit take each key in its own read

    def type(self, text: str) -> None:
        os.write(self._master, text.encode())
        time.sleep(0.15)

    def wait(self, timeout: float = 120.0) -> int:
        return self.process.wait(timeout=timeout)
