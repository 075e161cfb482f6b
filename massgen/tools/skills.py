"""Skills (`orchestrator.coordination.use_skills`, the predecessor's keys): folders of
written-down know-how, each with a `SKILL.md` whose YAML front matter gives its `name`
and `description`. The system prompt lists them; an agent loads one when a task needs it.

    <skills_directory>/<name>/SKILL.md     the project's (default `.agent/skills`, taken
                                           from the directory massgen runs in)
    ~/.agent/skills/<name>/SKILL.md        the user's
    massgen/skills/<name>/SKILL.md         bundled (`massgen_skills` picks some; none named
                                           means all)
    <logs>/log_*/turn_*/final/workspace/tasks/evolving_skill/SKILL.md
                                           earlier runs' final workspaces, with
                                           `load_previous_session_skills`

A name found twice is the first one's, in that order (a project skill overrides the
user's and a bundled one). The tools are reads, and say so as `Read` effects, so the
permission engine decides them like any read (a deny rule on a skill's path denies it):

    load_skill(name)              SKILL.md without its front matter, and the files beside it
    read_skill_file(name, path)   one of those files, confined to the skill's folder

The predecessor loaded skills through command execution (`openskills read <name>`); here
an agent needs no command tool. A SKILL.md that cannot be read or parsed is left out with
a warning naming the file. Everything is bounded: skills listed, bytes read, folder depth.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import yaml

from massgen.config.skills import BUNDLED, SKILL_FILE, canonical_bundled_name
from massgen.core.effects import Effect, Read
from massgen.core.toolbox import ToolContext, ToolResult, arguments_of
from massgen.core.types import ToolAnnotations, ToolCall, ToolSpec
from massgen.tools.python import PythonToolbox, tool_from_function

if TYPE_CHECKING:
    from massgen.config.schema import MassgenConfig

TOOL_NAMES = ("load_skill", "read_skill_file")
USER = Path(".agent") / "skills"  # under the home directory
EVOLVING = Path("final") / "workspace" / "tasks" / "evolving_skill" / SKILL_FILE

MAX_SKILLS = 64  # listed in the prompt; the rest are left out, with a warning
MAX_ENTRIES = 1000  # directory entries looked at per source
MAX_SKILL_BYTES = 128 * 1024  # a SKILL.md larger than this is left out
MAX_FILE_BYTES = 256 * 1024  # a file `read_skill_file` returns
MAX_DEPTH = 4  # folder levels listed below a skill's folder
MAX_FILES = 200  # files listed per skill
MAX_PREVIOUS_RUNS = 20  # newest log directories searched for evolving skills
MAX_LOG_DIRS = 10_000  # log directories looked at to find the newest
MAX_DESCRIPTION = 1024  # characters of a description shown in the prompt
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)

Location = Literal["project", "user", "builtin", "previous_session"]


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    location: Location
    folder: Path  # canonical

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass(frozen=True, slots=True)
class Catalog:
    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = ()

    def find(self, name: str) -> Skill | None:
        key = name.strip().lower()
        return next((s for s in self.skills if s.name.lower() == key), None)

    def roots(self) -> tuple[Path, ...]:
        """The skill folders: read-only managed paths for the permission engine."""
        return tuple(skill.folder for skill in self.skills)


@dataclass(frozen=True, slots=True)
class Sources:
    """Where to look. `bundled_names`: the bundled skills to take (empty: all)."""

    project: Path
    user: Path | None = None
    bundled: Path = BUNDLED
    bundled_names: tuple[str, ...] = ()
    previous_logs: Path | None = None


def sources_of(config: MassgenConfig, cwd: Path | None = None) -> Sources:
    """The config's sources, relative to `cwd` (default: the current directory)."""
    coordination = config.orchestrator.coordination
    base = cwd or Path.cwd()
    logs = None
    if coordination.load_previous_session_skills:
        from massgen.record.recorder import LOG_BASE_ENV

        logs = Path(os.environ.get(LOG_BASE_ENV) or base / ".massgen" / "massgen_logs")
    return Sources(
        project=base / Path(coordination.skills_directory).expanduser(),
        user=Path.home() / USER,
        bundled_names=tuple(canonical_bundled_name(n) for n in coordination.massgen_skills),
        previous_logs=logs,
    )


# ---------------------------------------------------------------- discovery


def discover(sources: Sources) -> Catalog:
    """Every skill the sources hold, first name wins, at most `MAX_SKILLS`; a problem with
    one skill is a warning, never an exception."""
    found: list[Skill] = []
    warnings: list[str] = []
    project = _canonical(sources.project)
    found += _scan(project, "project", warnings)
    user = _canonical(sources.user) if sources.user is not None else None
    if user is not None and user != project:
        found += _scan(user, "user", warnings)
    wanted = set(sources.bundled_names)
    for skill in _scan(_canonical(sources.bundled), "builtin", warnings):
        if not wanted or skill.folder.name in wanted:
            found.append(skill)
    if sources.previous_logs is not None:
        found += _previous(_canonical(sources.previous_logs), warnings)
    skills = _first_of_each_name(found)
    if len(skills) > MAX_SKILLS:
        warnings.append(f"{len(skills)} skills found; only the first {MAX_SKILLS} are listed")
        skills = skills[:MAX_SKILLS]
    if not skills:
        warnings.append(
            "`use_skills` is on but no skills were found (looked in "
            f"{sources.project}, {sources.user}, and the bundled skills)"
        )
    return Catalog(tuple(skills), tuple(warnings))


def _canonical(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _scan(directory: Path, location: Location, warnings: list[str]) -> list[Skill]:
    """`<directory>/<folder>/SKILL.md`, one level deep, folders in name order."""
    try:
        with os.scandir(directory) as listing:
            entries = sorted(itertools.islice(listing, MAX_ENTRIES), key=lambda e: e.name)
    except OSError:  # absent, or not a directory: nothing there
        return []
    out = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        folder = _canonical(Path(entry.path))
        if not (folder / SKILL_FILE).is_file():
            continue
        skill = _parse(folder, folder / SKILL_FILE, location, entry.name, warnings)
        if skill is not None:
            out.append(skill)
    return out


def _previous(logs: Path, warnings: list[str]) -> list[Skill]:
    """Evolving skills in the final workspaces of the newest `MAX_PREVIOUS_RUNS` runs."""
    try:
        names = itertools.islice(logs.glob("log_*"), MAX_LOG_DIRS)
        runs = sorted((p for p in names if p.is_dir()), reverse=True)
    except OSError:
        return []
    out = []
    for run in runs[:MAX_PREVIOUS_RUNS]:
        for turn in sorted(run.glob("turn_*"), reverse=True):
            file = turn / EVOLVING
            if file.is_file():
                fallback = f"session-{run.name.removeprefix('log_')}-{turn.name}"
                skill = _parse(file.parent, file, "previous_session", fallback, warnings)
                if skill is not None:
                    out.append(skill)
    return out


def _parse(
    folder: Path, file: Path, location: Location, fallback: str, warnings: list[str]
) -> Skill | None:
    try:
        text = read_bounded(file, MAX_SKILL_BYTES)
        meta, _ = split_front_matter(text)
    except ValueError as error:
        warnings.append(f"skill `{file}` left out: {error}")
        return None
    name = meta.get("name", fallback)
    description = meta.get("description")
    if not isinstance(name, str) or not _NAME.match(name.strip()):
        why = "its `name` must be letters, digits, `.`, `_` or `-` (at most 64)"
        warnings.append(f"skill `{file}` left out: {why}")
        return None
    if not isinstance(description, str) or not description.strip():
        warnings.append(f"skill `{file}` left out: its front matter needs a `description`")
        return None
    return Skill(name.strip(), " ".join(description.split()), location, folder)


def read_bounded(file: Path, limit: int) -> str:
    """The UTF-8 text of `file`. Raises ValueError: unreadable, too large, not text."""
    try:
        with open(file, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise ValueError(f"it cannot be read ({error.strerror or error})") from None
    if len(data) > limit:
        raise ValueError(f"it is larger than {limit // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """(front matter, body). Raises ValueError: no front matter, or not a YAML mapping."""
    text = text.removeprefix("\ufeff")
    match = _FRONT.match(text)
    if match is None:
        raise ValueError("it does not start with YAML front matter between `---` lines")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise ValueError(f"its front matter is not valid YAML{where}") from None
    if not isinstance(meta, dict):
        raise ValueError("its front matter is not a mapping of keys to values")
    return meta, text[match.end() :].strip()


def _first_of_each_name(skills: list[Skill]) -> list[Skill]:
    seen: set[str] = set()
    out = []
    for skill in skills:
        if skill.name.lower() not in seen:
            seen.add(skill.name.lower())
            out.append(skill)
    return out


# ---------------------------------------------------------------- the prompt


def prompt_section(catalog: Catalog) -> str:
    """The system prompt's paragraph: how to use skills, and each one listed."""
    lines = [
        "## Available skills",
        "Skills hold instructions for particular kinds of task. Before starting a task, "
        "check whether a skill below fits it; if one does, call `load_skill` with its name "
        "and follow its instructions. Files its instructions mention are read with "
        "`read_skill_file`. Load only skills listed here, and each at most once.",
        "",
        "<available_skills>",
    ]
    for skill in catalog.skills:
        description = skill.description
        if len(description) > MAX_DESCRIPTION:
            description = description[: MAX_DESCRIPTION - 3] + "..."
        lines += [
            "<skill>",
            f"<name>{_escaped(skill.name)}</name>",
            f"<description>{_escaped(description)}</description>",
            f"<location>{skill.location}</location>",
            "</skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------- the tools


class SkillToolbox:
    """`load_skill` and `read_skill_file` over one catalog. One
    instance serves a whole team: it keeps no state between calls."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._box = PythonToolbox(
            [
                tool_from_function(self.load_skill, "load_skill"),
                tool_from_function(self.read_skill_file, "read_skill_file"),
            ],
            timeout_seconds=10,
        )
        read_only = ToolAnnotations(read_only=True, destructive=False, open_world=False)
        self._specs = tuple(
            ToolSpec(s.name, s.description, s.parameters, read_only) for s in self._box.specs()
        )

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """Reads of what the call opens. A name that is no skill opens nothing.

        Raises:
            ValueError: malformed arguments, or a path outside the skill's folder.
        """
        args = _arguments(call)
        skill = self.catalog.find(_text(args, "name"))
        if skill is None or call.name not in TOOL_NAMES:
            return ()
        if call.name == "load_skill":
            return (Read(skill.folder), Read(skill.file))
        return (Read(_inside(skill, _text(args, "path"))),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return await self._box.call(call, ctx)

    # The tools: their signatures and docstrings are what the model sees.

    async def load_skill(self, name: str) -> str:
        """Load a skill listed under "Available skills" in your instructions: its full
        instructions, and the files in its folder (read them with `read_skill_file`).

        Args:
            name: The skill's name, as listed
        """
        skill = self._skill(name)
        try:
            _, body = split_front_matter(read_bounded(skill.file, MAX_SKILL_BYTES))
        except ValueError as error:
            raise ValueError(f"skill `{skill.name}` cannot be loaded: {error}") from None
        files = _files(skill.folder)
        listing = "\n".join(f"- {f}" for f in files) if files else "(none besides SKILL.md)"
        return (
            f'<skill name="{_escaped(skill.name)}" location="{skill.location}">\n'
            f"Folder: {skill.folder}\nFiles:\n{listing}\n\n{body}\n</skill>"
        )

    async def read_skill_file(self, name: str, path: str) -> str:
        """Read a file from a skill's folder (one that `load_skill` listed).

        Args:
            name: The skill's name
            path: The file's path inside the skill's folder, e.g. `scripts/check.py`
        """
        file = _inside(self._skill(name), path)
        if not file.is_file():
            raise ValueError(f"`{path}` is not a file of skill `{name}`")
        text = read_bounded(file, MAX_FILE_BYTES)
        if "\x00" in text:
            raise ValueError(f"`{path}` is a binary file")
        return text

    def _skill(self, name: str) -> Skill:
        skill = self.catalog.find(name)
        if skill is None:
            known = ", ".join(s.name for s in self.catalog.skills) or "none"
            raise ValueError(f"there is no skill `{name}` (skills: {known})")
        return skill


def _arguments(call: ToolCall) -> dict[str, object]:
    return arguments_of(call.arguments)


def _text(args: dict[str, object], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ValueError(f"`{key}` must be a string")
    return value


def _inside(skill: Skill, path: str) -> Path:
    """The real path of `path` in the skill's folder. Raises ValueError: outside it."""
    if not path.strip() or os.path.isabs(path) or "\x00" in path:
        raise ValueError(f"`{path}` must be a relative path inside skill `{skill.name}`")
    real = _canonical(skill.folder / path)
    if not real.is_relative_to(skill.folder):
        raise ValueError(f"`{path}` is outside the folder of skill `{skill.name}`")
    return real


def _files(folder: Path) -> list[str]:
    """Files below `folder` (not SKILL.md, nothing hidden), at most `MAX_DEPTH` levels
    down and `MAX_FILES` in all, as relative POSIX paths."""
    out: list[str] = []
    for root, dirs, names in os.walk(folder):  # symlinked folders are not followed
        depth = len(Path(root).relative_to(folder).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < MAX_DEPTH else []
        for name in sorted(names):
            if name.startswith(".") or (depth == 0 and name == SKILL_FILE):
                continue
            out.append((Path(root) / name).relative_to(folder).as_posix())
            if len(out) >= MAX_FILES:
                return out
    return out
