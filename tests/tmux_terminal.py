"""Drive a program in a real terminal (tmux) from a test: start it, wait for text, send keys.

    with start_massgen(tmp_path, "--config", "team.yaml", "question") as term:
        term.wait_for("permission asked")
        term.keys("Up", "Enter")
        term.wait_until(lambda screen: "winner" in screen, "the result")
        assert term.exit_status(timeout=30) == 0

Each terminal has its own tmux server (a private socket), so a user's sessions are never
touched, and the pane stays after the program exits so its last screen and exit status
can be read. Every wait has a deadline and fails with the screen in its message. Tests
skip with `pytest.importorskip`-like `require_tmux()` where tmux is not installed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 120, 40
_numbers = itertools.count()


def require_tmux() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")


class TmuxTerminal:
    """One program in one tmux pane of `width` x `height`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        width: int = WIDTH,
        height: int = HEIGHT,
    ) -> None:
        """`env`: added to a clean environment (PATH, HOME=cwd/home, the user's caches, TERM,
        PYTHONPATH)."""
        self.socket = f"massgen-test-{os.getpid()}-{next(_numbers)}"
        self.height = height
        variables = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(cwd / "home"),
            "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],  # built models: tests/conftest.py
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        }
        assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in variables.items())
        # tmux 3.3 does not always know a dead pane's status: the shell writes it down,
        # with the terminal's settings before and after. `trap true INT` keeps the shell
        # through a Ctrl-C; the program, started by it, gets the default handler.
        self._files = Path(tempfile.mkdtemp(prefix="massgen-tmux-"))
        files = {
            name: shlex.quote(str(self._files / name)) for name in ("status", "before", "after")
        }
        command = (
            f"cd {shlex.quote(str(cwd))}; trap true INT; stty -g > {files['before']};"
            f" env -i {assignments} {shlex.join(argv)}; status=$?;"
            f" stty -g > {files['after']}; echo $status > {files['status']}"
        )
        self._tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(width),
                   "-y", str(height), "sh", "-c", command)  # fmt: skip
        self._tmux("set-option", "-t", "t", "remain-on-exit", "on")
        self._tmux("set-option", "-t", "t", "history-limit", "10000")

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args[:2])} failed: {done.stderr.strip()}")
        return done.stdout

    # --- input ------------------------------------------------------------------------

    def keys(self, *names: str) -> None:
        """tmux key names, pressed in order: "Up", "Down", "Enter", "C-c", "Escape", "q"."""
        for name in names:
            self._tmux("send-keys", "-t", "t", name)

    def type(self, text: str, *, enter: bool = True) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)
        if enter:
            self.keys("Enter")

    # --- output -----------------------------------------------------------------------

    def screen(self, *, styles: bool = False) -> str:
        """What the terminal shows now, one line per row; `styles`: with the escape
        codes of its colours and attributes."""
        return self._tmux("capture-pane", "-p", *(["-e"] if styles else []), "-t", "t")

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", "t", "-x", str(width), "-y", str(height))

    def signal(self, name: str) -> None:
        """Send signal `name` ("TERM") to the program (the pane's shell's child)."""
        shell = self._tmux("display-message", "-p", "-t", "t", "#{pane_pid}").strip()
        subprocess.run(["pkill", f"-{name}", "-P", shell], check=True, timeout=10)

    def in_alternate_screen(self) -> bool:
        """Whether a full-screen program's screen is still up (after it exited: left)."""
        return self._tmux("display-message", "-p", "-t", "t", "#{alternate_on}").strip() == "1"

    def history(self) -> str:
        """The scrollback and the screen, wrapped lines joined."""
        return self._tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-10000")

    def wait_until(
        self, check: Callable[[str], bool], what: str, timeout: float = 30.0, *, scrollback=False
    ) -> str:
        """Poll the screen (or the scrollback) until `check` holds; return what it held on."""
        read = self.history if scrollback else self.screen
        deadline = time.monotonic() + timeout
        while True:
            text = read()
            if check(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not shown within {timeout}s; screen:\n{text}")
            time.sleep(0.05)

    def wait_for(self, *needles: str, timeout: float = 30.0, scrollback: bool = False) -> str:
        """Wait until every one of `needles` is shown at once; return that screen."""
        return self.wait_until(
            lambda text: all(needle in text for needle in needles),
            f"{needles!r}",
            timeout,
            scrollback=scrollback,
        )

    def exit_status(self, timeout: float = 30.0) -> int:
        """Wait for the program to end; its exit status, as a shell reports it (128 + the
        signal's number when a signal ended it)."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(FileNotFoundError, ValueError):
                return int((self._files / "status").read_text())
            if time.monotonic() > deadline:
                raise AssertionError(f"still running after {timeout}s; screen:\n{self.screen()}")
            time.sleep(0.05)

    def settings_restored(self) -> bool:
        """After `exit_status()`: whether the program left the terminal as it found it
        (no raw mode, echo on)."""
        before, after = ((self._files / name).read_text() for name in ("before", "after"))
        return before.strip() != "" and before == after

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        shutil.rmtree(self._files, ignore_errors=True)

    def __enter__(self) -> TmuxTerminal:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def start_python(cwd: Path, *args: str, **options: object) -> TmuxTerminal:
    """`python ARGS` (this interpreter) in a fresh terminal, in `cwd`."""
    require_tmux()
    (cwd / "home").mkdir(exist_ok=True)
    return TmuxTerminal([sys.executable, *args], cwd=cwd, **options)  # type: ignore[arg-type]


def start_massgen(cwd: Path, *args: str, **options: object) -> TmuxTerminal:
    """`python -m massgen ARGS` from this checkout in a fresh terminal, in `cwd`."""
    return start_python(cwd, "-m", "massgen", *args, **options)
