"""The readable part of a JSON workflow action, as it streams.

An agent without function calling writes its action as JSON text, e.g.
`{"action": "new_answer", "content": "Paris is ..."}`. Shown raw, a panel fills with
braces and escapes. `ActionText` is fed that text chunk by chunk and gives back what a
person wants to read: the answer being written, unescaped. Everything else inside the
object is left out (a vote shows as its own marker once cast); text outside any object
(a model talking before its JSON) passes through. Objects may follow one another, as they
do when an invalid action is retried.

`RunText` is what both views keep per agent run: the text as shown (JSON decoded), so an
answer that never streamed (written as a tool call's argument) can be shown once when it
is published.
"""

from __future__ import annotations

SHOWN_KEYS = frozenset({"content"})  # the answer's text in `new_answer`

_ESCAPES = {"n": "\n", "t": "\t", "r": "", "b": "", "f": "", '"': '"', "\\": "\\", "/": "/"}


class ActionText:
    def __init__(self) -> None:
        self._depth = 0  # nesting of objects and arrays
        self._in_string = False
        self._string_is_key = False
        self._expect_key = False  # at depth 1, the next string is a key
        self._key = ""  # the depth-1 key whose value comes next (or is being read)
        self._key_chars: list[str] = []
        self._showing = False  # inside a string value that is shown
        self._escape: str | None = None  # after a backslash: "" or the \u digits so far
        self._high_surrogate: str | None = None

    def feed(self, text: str) -> str:
        out: list[str] = []
        for char in text:
            if self._in_string:
                self._string_char(char, out)
            elif self._depth == 0 and char != "{":
                out.append(char)
            else:
                self._structure_char(char)
        return "".join(out)

    def _structure_char(self, char: str) -> None:
        if char in "{[":
            self._depth += 1
            self._expect_key = self._depth == 1 and char == "{"
        elif char in "}]":
            self._depth = max(0, self._depth - 1)
        elif self._depth == 1 and char == ",":
            self._expect_key = True
        elif char == '"':
            self._in_string = True
            self._string_is_key = self._depth == 1 and self._expect_key
            self._showing = self._depth == 1 and not self._expect_key and self._key in SHOWN_KEYS
            self._key_chars = []

    def _string_char(self, char: str, out: list[str]) -> None:
        if self._escape is not None:
            self._escaped(char, out)
        elif char == "\\":
            self._escape = ""
        elif char == '"':
            self._in_string = False
            self._showing = False
            if self._string_is_key:
                self._key, self._expect_key = "".join(self._key_chars), False
        else:
            self._emit(char, out)

    def _escaped(self, char: str, out: list[str]) -> None:
        if self._escape == "" and char != "u":
            self._escape = None
            self._emit(_ESCAPES.get(char, char), out)
            return
        self._escape = (self._escape or "") + char
        if len(self._escape) < 5:  # "u" and four hex digits
            return
        digits, self._escape = self._escape[1:], None
        try:
            code = int(digits, 16)
        except ValueError:
            return
        self._emit(self._from_code(code), out)

    def _from_code(self, code: int) -> str:
        if 0xD800 <= code < 0xDC00:  # the first half of a pair: wait for the second
            self._high_surrogate = chr(code)
            return ""
        high, self._high_surrogate = self._high_surrogate, None
        if high is not None and 0xDC00 <= code < 0xE000:
            pair = (high + chr(code)).encode("utf-16", "surrogatepass")
            return pair.decode("utf-16")
        return chr(code)

    def _emit(self, text: str, out: list[str]) -> None:
        if self._string_is_key:
            self._key_chars.append(text)
        elif self._showing:
            out.append(text)


class RunText:
    """One agent run's streamed text as a view shows it."""

    def __init__(self, json_actions: bool = False) -> None:
        self._decoder = ActionText() if json_actions else None
        self._shown: list[str] = []  # chunks, joined only when an answer is published

    def feed(self, text: str) -> str:
        """What to show for this streamed chunk."""
        shown = self._decoder.feed(text) if self._decoder else text
        self._shown.append(shown)
        return shown

    def unshown(self, answer: str) -> str:
        """The published answer's text if this run has not shown it yet, else ""."""
        answer = answer.strip()
        return answer if answer and answer not in "".join(self._shown) else ""
