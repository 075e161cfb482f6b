"""Where the chat's lines come from: a terminal prompt, or a pipe or file.

Both raise EOFError when the input ends, which is how the chat knows the user left.
prompt_toolkit is imported only when a terminal prompt is made: a piped chat and
`massgen --help` never load it.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any, Protocol, TextIO

HISTORY_FILE = Path("~/.config/massgen/chat_history")


class LineReader(Protocol):
    async def read(self, prompt: str) -> str:
        """The next line. Raises EOFError or KeyboardInterrupt when the user leaves."""
        ...


class PromptReader:
    """A terminal prompt with line editing and a history file (prompt_toolkit)."""

    def __init__(self, history_file: Path = HISTORY_FILE) -> None:
        from prompt_toolkit import PromptSession

        self._session: Any = PromptSession(history=line_history(history_file))

    async def read(self, prompt: str) -> str:
        return await self._session.prompt_async(prompt)


def line_history(history_file: Path = HISTORY_FILE) -> Any:
    """The lines typed at the chat's prompt, in earlier sessions too: a prompt_toolkit
    `History` (the app's input recalls the same lines as the plain prompt)."""
    from prompt_toolkit.history import FileHistory, History, InMemoryHistory

    path = history_file.expanduser()
    history: History
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(path))
    except OSError:  # a read-only home: still a chat, just no saved history
        history = InMemoryHistory()
    return history


class StreamReader:
    """Lines from a pipe or a file (no terminal): no editing; end of input ends the chat.

    A daemon thread reads, so a blocked read never keeps the process alive at exit.
    """

    def __init__(self, stream: TextIO | None = None, echo: TextIO | None = None) -> None:
        self._stream = stream or sys.stdin
        self._echo = echo or sys.stdout
        self._queue: asyncio.Queue[str | None] | None = None

    async def read(self, prompt: str) -> str:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._start(asyncio.get_running_loop(), self._queue)
        self._echo.write(prompt)
        self._echo.flush()
        line = await self._queue.get()
        if line is None:
            self._echo.write("\n")
            raise EOFError
        self._echo.write(line + "\n")  # a transcript shows what was asked
        return line

    def _start(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        def pump() -> None:
            for line in self._stream:
                loop.call_soon_threadsafe(queue.put_nowait, line.rstrip("\r\n"))
            loop.call_soon_threadsafe(queue.put_nowait, None)

        threading.Thread(target=pump, name="massgen-stdin", daemon=True).start()
