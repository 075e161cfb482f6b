"""No module in `massgen/` is over 500 lines: past that a module does more than one thing,
and a reader cannot hold it. Split it where its parts already are (see the layer test for
where a split-off part may go)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "massgen"
MAX_LINES = 500


def test_no_module_is_over_500_lines() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > MAX_LINES:
            long.append(f"{path.relative_to(PACKAGE.parent)}: {count} lines")
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)
