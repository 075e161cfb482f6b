"""What a config file says about its display, read before it is validated: no pydantic, no
schema, so the terminal app can open while the config loads (`cli_output.app_first`).

The answer is only a hint for choosing the view early. Whenever the file cannot be read
this way (missing, malformed, a display key written in a way this does not follow), the
answer is UNKNOWN and the caller loads the config first, which says what is wrong.
"""

from __future__ import annotations

from pathlib import Path

UNKNOWN = "?"  # the file's display cannot be told without loading it
# `ui.display_type` values (the predecessor's names too, see `ui/choice.CONFIGURED`).
NAMES = {"textual_terminal", "rich_terminal", "terminal", "simple", "plain", "silent"}


def display_named(path: Path) -> str | None:
    """The `ui.display_type` the file sets, None when it sets none, else UNKNOWN."""
    try:
        raw = _parse(path.read_text(encoding="utf-8"), path.suffix.lower())
    except Exception:  # any problem: the loader reports it, in its own words
        return UNKNOWN
    if not isinstance(raw, dict) or "display" in raw:  # the predecessor's `display:` block
        return UNKNOWN
    ui = raw.get("ui")
    if ui is None:
        return None
    if not isinstance(ui, dict) or "type" in ui:  # `ui.type`: the predecessor's name
        return UNKNOWN
    named = ui.get("display_type")
    if named is None and "display_type" not in ui:
        return None
    return named if named in NAMES else UNKNOWN


def _parse(text: str, suffix: str) -> object:
    if suffix == ".json":
        import json

        return json.loads(text)
    if suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(text)
    return UNKNOWN
