"""The colours the terminal views give an agent's state and its stream's kinds of text
(rich style strings): shared by the live view and the app. Plain data, so the app does not
import the live view (and rich's Markdown) before its first frame."""

from __future__ import annotations

STREAM_STYLES = {
    "text": "",
    "reasoning": "dim italic",
    "tool": "cyan",
    "answer": "green",
    "vote": "blue",
    "restart": "yellow",
    "failed": "red",
    "final": "",
    "note": "dim",
}
STATE_STYLES = {
    "failed": "bold red",
    "winner": "bold green",
    "done": "",
    "vote": "blue",
    "answer": "green",
    "restart": "yellow",
    "busy": "cyan",
    "idle": "dim",
}
BORDER_STYLES = {"failed": "red", "winner": "green"}
