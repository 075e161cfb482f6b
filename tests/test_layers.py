"""The layer order in docs/architecture.md holds: every import in `massgen/` points down.

The order is read from the drawing in docs/architecture.md (§2), so the page and this test
cannot drift apart. A unit is a package (`core/`) or a top-level module (`api.py`); one
line of the drawing is one layer, the top line first. A module may import its own unit and
any unit on a lower line; units on the same line may not import each other (that is how a
cycle would come back).

Every import counts: at the top of a module, inside a function, and under
`TYPE_CHECKING` (a type a module names is a dependency a reader has to follow, and an
import kept for the type checker alone is still a cycle in the design). So do string
constants that name a massgen module (`importlib.import_module` tables such as the CLI's
subcommands). There is no exceptions list.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "massgen"
DOC = ROOT / "docs" / "architecture.md"

_MODULE_NAME = re.compile(r"^massgen(\.[a-z_][a-z0-9_]*)+$")


def layers() -> list[list[str]]:
    """The drawing's units, one list per line, bottom layer first."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## 2. Layers", 1)[1]
    block = section.split("```", 2)[1]
    rows = []
    for line in block.splitlines()[1:]:
        units, _, _ = line.partition("←")
        if units.strip():
            rows.append([u.strip() for u in units.split(",")])
    return rows[::-1]


def units_on_disk() -> set[str]:
    found = {"__init__.py"}
    for path in PACKAGE.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(f"{path.name}/")
        elif path.suffix == ".py":
            found.add(path.name)
    return found


def unit_of(module: str) -> str | None:
    """`massgen.core.types` → `core/`; `massgen.api` → `api.py`; not massgen's → None."""
    parts = module.split(".")
    if parts[0] != "massgen":
        return None
    if len(parts) == 1:
        return "__init__.py"
    if (PACKAGE / parts[1]).is_dir():
        return f"{parts[1]}/"
    if (PACKAGE / f"{parts[1]}.py").exists():
        return f"{parts[1]}.py"
    return None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[tuple[int, str]]:
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), path.name)


def imports_in(text: str, module: str, filename: str) -> list[tuple[int, str]]:
    """(line, module) for every import in a module's text, wherever it stands."""
    here = module.split(".")
    package = here if filename == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.append((node.lineno, base))
            # `from massgen import api` imports the module massgen.api.
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and _MODULE_NAME.match(str(node.value)):
            found.append((node.lineno, str(node.value)))
    return found


def test_the_drawing_names_every_unit_once() -> None:
    drawn = [unit for row in layers() for unit in row]
    assert sorted(drawn) == sorted(set(drawn)), "a unit is drawn twice"
    assert set(drawn) == units_on_disk()


def test_imports_point_down() -> None:
    rank = {unit: i for i, row in enumerate(layers()) for unit in row}
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = unit_of(module_name(path))
        assert source is not None
        for line, module in imported(path):
            target = unit_of(module)
            if target is None or target == source:
                continue
            if rank[target] >= rank[source]:
                where = path.relative_to(ROOT)
                wrong.append(f"{where}:{line} ({source}) imports {module} ({target})")
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_an_upward_import_is_caught() -> None:
    """The reader sees imports inside functions and under TYPE_CHECKING, relative ones
    resolved, and module names in strings: the test above cannot pass by not seeing them."""
    text = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from massgen.api import run\n"
        "def f():\n    from ..coordination import board\n"
        "    return 'massgen.cli'\n"
    )
    modules = [m for _, m in imports_in(text, "massgen.core.types", "types.py")]
    assert {unit_of(m) for m in modules} >= {"api.py", "coordination/", "cli.py"}


# --- inside coordination/: the core and its aids -----------------------------------------

COORDINATION = PACKAGE / "coordination"
AIDS = "massgen.coordination.aids"
# The one interface the core calls (`coordination/aids/base.py`), as the package exports it.
AIDS_INTERFACE = {f"{AIDS}.Aids"}


def aid_modules_in(text: str, module: str, filename: str) -> list[str]:
    """`line: module` for each import of an aid's own module (anything under `aids.`
    but the interface)."""
    return [
        f"{line}: {name}"
        for line, name in imports_in(text, module, filename)
        if name.startswith(f"{AIDS}.") and name not in AIDS_INTERFACE
    ]


def test_the_coordination_core_sees_the_aids_through_one_interface() -> None:
    """The protocol core (every module of `coordination/` outside `aids/`) imports
    `Aids` from `massgen.coordination.aids` and no aid's module (§2, inside
    `coordination/`)."""
    core = sorted(COORDINATION.glob("*.py"))
    assert len(core) > 20  # the glob found the core
    found = {
        path.name: hits
        for path in core
        if (hits := aid_modules_in(path.read_text("utf-8"), module_name(path), path.name))
    }
    assert found == {}


def test_an_import_of_an_aid_module_is_caught() -> None:
    text = (
        "from massgen.coordination.aids import Aids\n"
        "def f():\n"
        "    from massgen.coordination.aids import personas\n"
        "    from .aids.broadcast import Broadcasts\n"
    )
    hits = aid_modules_in(text, "massgen.coordination.orchestrator", "orchestrator.py")
    assert [hit.split(": ")[1] for hit in hits] == [
        "massgen.coordination.aids.personas",
        "massgen.coordination.aids.broadcast",
        "massgen.coordination.aids.broadcast.Broadcasts",
    ]
