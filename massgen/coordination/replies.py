"""A tool-free model reply read as text, bounded: the calls made beside coordination
(personas and criteria before it, answers to `ask_others` during it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from massgen.core.types import BackendEvent, TextChunk, Usage


@dataclass(slots=True)
class TextReply:
    """The reply's text and usage so far. `read` stops, closing the stream, once the text
    passes `max_chars` (`overflowed`); `streamed` says whether anything came at all."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    streamed: bool = False
    overflowed: bool = False

    async def read(self, stream: AsyncIterator[BackendEvent], max_chars: int) -> None:
        try:
            async for item in stream:
                self.streamed = True
                if isinstance(item, TextChunk):
                    self.text += item.text
                    if len(self.text) > max_chars:
                        self.overflowed = True
                        return
                elif isinstance(item, Usage):
                    self.usage = self.usage + item
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
