"""An ask in words a person can check: "write /abs/path", "run: git push origin".

Whatever a model chose (a path, an argv, an MCP tool name) reaches a terminal or a file
read by a person, so control characters are shown escaped (a newline or an escape sequence
in a file name must not redraw the prompt) and every text is bounded.
"""

from __future__ import annotations

import shlex

from massgen.core.effects import Delete, Effect, External, Net, Read, Run, Write
from massgen.permissions.approval import ApprovalRequest

MAX_TEXT = 300  # one effect, one reason: longer is cut with an ellipsis
MAX_EFFECTS = 8  # a call that does more is summarised as "… and N more"


def visible(text: str, limit: int = MAX_TEXT) -> str:
    """`text` on one line, control characters escaped, at most `limit` characters."""
    shown = "".join(_escape(char) for char in text)
    return shown if len(shown) <= limit else shown[: max(0, limit - 1)] + "…"


def _escape(char: str) -> str:
    if char.isprintable() or char == " ":
        return char
    return char.encode("unicode_escape").decode("ascii")


def effect_text(effect: Effect) -> str:
    """One effect as a person reads it: "write /abs/path", "call mcp tool time/get_time"."""
    match effect:
        case Read(path):
            text = f"read {path}"
        case Write(path):
            text = f"write {path}"
        case Delete(path):
            text = f"delete {path}"
        case Run(argv, cwd):
            text = f"run: {shlex.join(argv)} (in {cwd})"
        case Net(host):
            text = f"connect to {host}"
        case External(server, tool):
            text = f"call mcp tool {server}/{tool}"
        case _:
            text = f"unknown effect {effect!r}"  # never a silent blank
    return visible(text)


def effects_text(request: ApprovalRequest) -> list[str]:
    """Every effect of the call (bounded), or what is known when it declared none."""
    lines = [effect_text(effect) for effect in request.effects[:MAX_EFFECTS]]
    if len(request.effects) > MAX_EFFECTS:
        lines.append(f"… and {len(request.effects) - MAX_EFFECTS} more")
    return lines or [visible(f"{request.tool} with {request.arguments}")]
