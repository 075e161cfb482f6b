"""The skills bundled with massgen (`massgen/skills/<name>/SKILL.md`), by name: what
`massgen_skills` may name (checked at load) and where `tools/skills.py` finds them."""

from __future__ import annotations

from pathlib import Path

SKILL_FILE = "SKILL.md"
BUNDLED = Path(__file__).resolve().parents[1] / "skills"


def bundled_names(bundled: Path = BUNDLED) -> tuple[str, ...]:
    """The bundled skills' folder names, sorted."""
    if not bundled.is_dir():
        return ()
    return tuple(sorted(p.name for p in bundled.iterdir() if (p / SKILL_FILE).is_file()))


def canonical_bundled_name(name: str) -> str:
    """The predecessor's docs spell `file_search`; the folder is `file-search`."""
    return name.strip().lower().replace("_", "-")
