"""Packaged example configs (`@examples/NAME`) and how a `--config` value finds its file.

Examples are the YAML files under the repository's `configs/`, shipped in the wheel as
`massgen/configs/`. A name is the path below that directory without `.yaml`
(`providers/groq`); a bare file stem (`groq`) also works when it is unique. Names match
exactly: the predecessor's substring match picked whichever file the filesystem listed
first.
"""

from __future__ import annotations

import difflib
from importlib import resources
from pathlib import Path

from massgen.core.errors import ConfigError

EXAMPLES_PREFIX = "@examples/"
LIST_FIX = "Run `massgen --list-examples` to see them all"


def examples_dir() -> Path:
    """`massgen/configs` in an installed wheel, else `<repo root>/configs` in a checkout."""
    packaged = Path(str(resources.files("massgen") / "configs"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "configs"


def list_examples() -> list[tuple[str, str]]:
    """(name, description) for every example, sorted by name.

    The description is the file's first `# ...` comment line.
    """
    return [(name, _description(path)) for name, path in sorted(_examples().items())]


def example_text(name: str) -> str:
    """The text of example `name` (exact name or unique stem).

    Raises:
        ConfigError: no example has that name; lists close matches.
    """
    return example_path(name).read_text(encoding="utf-8")


def example_path(name: str) -> Path:
    """The file of example `name` (exact name or unique stem; `.yaml` may be given).

    Raises:
        ConfigError: no example, or several, have that name.
    """
    examples = _examples()
    name = name.removesuffix(".yaml").removesuffix(".yml").strip("/")
    if name in examples:
        return examples[name]
    by_stem = sorted(n for n in examples if n.rsplit("/", 1)[-1] == name)
    if len(by_stem) == 1:
        return examples[by_stem[0]]
    if by_stem:
        choices = ", ".join(f"`@examples/{n}`" for n in by_stem)
        raise ConfigError(f"example name {name!r} is ambiguous", fix=f"Use one of {choices}")
    raise ConfigError(f"no example named {name!r}", fix=_suggest(name, list(examples)))


def resolve_config_arg(value: str) -> Path:
    """The file a `--config` value means.

    `@examples/NAME` is an example (exact name); otherwise a path (`~` expanded, relative
    to the working directory); otherwise `~/.config/massgen/agents/NAME[.yaml]`.

    Raises:
        ConfigError: nothing matches; says what was tried and how to list examples.
    """
    if value.startswith(EXAMPLES_PREFIX):
        return example_path(value.removeprefix(EXAMPLES_PREFIX))
    direct = Path(value).expanduser()
    if direct.is_file():
        return direct
    agents_dir = Path.home() / ".config" / "massgen" / "agents"
    for candidate in (agents_dir / value, agents_dir / f"{value}.yaml"):
        if candidate.is_file():
            return candidate
    raise ConfigError("no such file", file=value, fix=_missing_fix(value))


def find_default_config(cwd: Path | None = None, home: Path | None = None) -> Path | None:
    """`.massgen/config.yaml` in cwd, else `~/.config/massgen/config.yaml`, else None."""
    candidates = (
        (cwd or Path.cwd()) / ".massgen" / "config.yaml",
        (home or Path.home()) / ".config" / "massgen" / "config.yaml",
    )
    return next((p for p in candidates if p.is_file()), None)


def _missing_fix(value: str) -> str:
    try:
        example_path(value)
    except ConfigError:
        return "Check the path or use `massgen --list-examples`"
    return f"Did you mean `@examples/{value.removesuffix('.yaml')}`?"


def _suggest(name: str, names: list[str]) -> str:
    stems = {n.rsplit("/", 1)[-1]: n for n in names}
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    close += [stems[s] for s in difflib.get_close_matches(name, list(stems), n=3, cutoff=0.6)]
    unique = list(dict.fromkeys(close))[:3]
    if not unique:
        return LIST_FIX
    return "Close matches: " + ", ".join(f"`@examples/{n}`" for n in unique) + ". " + LIST_FIX


def _examples() -> dict[str, Path]:
    root = examples_dir()
    if not root.is_dir():
        return {}
    return {
        path.relative_to(root).with_suffix("").as_posix(): path
        for path in root.rglob("*.yaml")
        if path.is_file()
    }


def _description(path: Path) -> str:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                return line.lstrip("#").strip()
    return ""
