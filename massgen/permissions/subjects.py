"""What the engine judges: a call's effects, canonicalised into subjects.

One effect may become several subjects: a command (`Run`) becomes each simple command it
runs, each file its redirects write or read, each path-like argument it names, and a
note for whatever cannot be known (`opaque`). Rules and risk defaults are written over
subjects, so `Read(./src/**)` applies to `read_file src/a.py` and to `cat src/a.py` alike.
"""

from __future__ import annotations

import glob
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from massgen.core.effects import Delete, Effect, External, Net, Read, Run, Write
from massgen.permissions import floor, shell
from massgen.permissions.paths import UnsafePath, canonical, linked_elsewhere

MAX_DIRECTORIES = 16
MAX_GLOB_MATCHES = 256

Kind = Literal["read", "write", "delete", "command", "fetch", "mcp", "opaque"]


@dataclass(frozen=True, slots=True)
class Subject:
    kind: Kind
    target: str  # a canonical path, a command's words, a host, "server/tool", a reason
    path: Path | None = None
    argv: tuple[str, ...] = ()
    dynamic: bool = False  # a command with words whose value is unknown here
    read_only: bool = False  # an MCP tool a trusted server marks read-only
    untrusted: bool = False  # a tool of an MCP server not marked `trusted: true`
    cwd: Path | None = None

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.target}"

    def describe(self) -> str:
        what = {
            "read": "read",
            "write": "write",
            "delete": "delete",
            "command": "run",
            "fetch": "connect to",
            "mcp": "call",
            "opaque": "run",
        }[self.kind]
        return f"{what} `{self.target}`"


class Refusal(Exception):
    """The floor or canonicalisation refuses the call; the message says why."""


def floor_check(effects: tuple[Effect, ...]) -> None:
    """Raises Refusal for anything the hardline floor forbids."""
    for effect in effects:
        if isinstance(effect, Run):
            parsed = _parse(effect)
            if parsed is None:
                continue
            for simple in parsed.commands:
                if (why := floor.refusal(simple)) is not None:
                    raise Refusal(f"{why} is never allowed")
            for target in parsed.writes:
                if (why := floor.write_refusal(target)) is not None:
                    raise Refusal(f"{why} is never allowed")
        elif isinstance(effect, Write | Delete) and (why := floor.write_refusal(str(effect.path))):
            raise Refusal(f"{why} is never allowed")


def subjects_of(effects: tuple[Effect, ...]) -> list[Subject]:
    """Raises Refusal for a path the engine will not reason about."""
    out: list[Subject] = []
    for effect in effects:
        match effect:
            case Read(path=p):
                out.append(_path("read", _unexpanded(p)))
            case Write(path=p):
                out.append(_path("write", _unexpanded(p)))
            case Delete(path=p):
                out.append(_path("delete", _unexpanded(p)))
            case Run():
                out += _command(effect)
            case Net(host=host):
                out.append(Subject("fetch", host.lower().rstrip(".")))
            case External(server=server, tool=tool):
                ro, untrusted = effect.read_only, effect.untrusted_server
                out.append(Subject("mcp", f"{server}/{tool}", read_only=ro, untrusted=untrusted))
    return out


def _unexpanded(path: Path | str) -> Path | str:
    """A tool's path with `~` or `$NAME` left in it names something other than what the
    model meant (the tool did not expand it): refused rather than guessed."""
    for part in Path(path).parts:
        if part.startswith("~") or "$" in part:
            raise Refusal(f"`{part}` in a path is not expanded; name the file without it")
    return path


def _path(kind: Kind, raw: Path | str, base: Path | None = None) -> Subject:
    try:
        real = canonical(raw, base)
    except UnsafePath as error:
        raise Refusal(str(error)) from None
    if linked_elsewhere(real):
        raise Refusal(f"`{raw}` is a hard link; its other names may lie outside your workspace")
    return Subject(kind, str(real), path=real)


def _parse(effect: Run) -> shell.Parsed | None:
    if len(effect.argv) == 3 and effect.argv[1] == "-c":
        try:
            return shell.parse(effect.argv[2])
        except shell.Unparseable:
            return None
    return shell.Parsed(commands=[shell.Simple(effect.argv)])


def _command(effect: Run) -> list[Subject]:
    if len(effect.argv) == 3 and effect.argv[1] == "-c":
        try:
            parsed = shell.parse(effect.argv[2])
        except shell.Unparseable as error:
            return [Subject("opaque", f"unreadable command ({error})")]
        parsed.commands = [c for c in parsed.commands if c.argv[:2] != (effect.argv[0], "-c")]
    else:
        parsed = shell.Parsed(commands=[shell.Simple(effect.argv)])
    cwds = _directories(parsed, effect.cwd)
    out = [Subject("opaque", why) for why in parsed.opaque]
    for simple in parsed.commands:
        if _computed(simple):
            out.append(Subject("opaque", f"`{simple.text()}` takes arguments computed at run time"))
        out.append(Subject("command", simple.text(), argv=simple.argv, dynamic=simple.dynamic,
                           cwd=effect.cwd))  # fmt: skip
        for cwd in cwds:
            out += [_path("read", word, cwd) for word in _path_words(simple, cwd)]
    out += [_path("read", cwd) for cwd in cwds[1:]]  # where `cd` goes is read there
    for cwd in cwds:  # a relative target is checked from every directory the chain visits
        out += [_path("write", target, cwd) for target in parsed.writes]
        out += [_path("read", target, cwd) for target in parsed.reads]
    return out


# Commands whose computed arguments are only printed or compared, never opened.
_PRINTS = frozenset({"echo", "printf", "true", "false", "test", "[", ":"})


def _computed(simple: shell.Simple) -> bool:
    """Arguments from a variable or a substitution (`cat $X`, `cat $(echo …)`) may name
    any file; what they name is known only when the command runs."""
    return simple.computed and Path(simple.argv[0]).name not in _PRINTS


def _directories(parsed: shell.Parsed, start: Path) -> list[Path]:
    """The directories a chain may run in: where it starts, and where each `cd` goes
    (a bare `cd` goes home). Bounded: a chain that visits more is refused."""
    found = [start]
    for simple in parsed.commands:
        if simple.argv[0] not in ("cd", "pushd"):
            continue
        target = simple.argv[1] if len(simple.argv) > 1 else "~"
        found.append(_path("read", target, found[-1]).path or start)
        if len(found) > MAX_DIRECTORIES:
            raise Refusal("the command changes directory too often to be checked")
    return list(dict.fromkeys(found))


def _path_words(simple: shell.Simple, cwd: Path) -> list[str]:
    """The arguments that look like paths (`cat ../x`, `--out=/etc/y`, `~/.ssh`), or
    that name something in `cwd` (`cat link`, where `link` may point anywhere)."""
    found = []
    for word in simple.argv[1:]:
        if word.startswith("-") and "=" in word:
            word = word.split("=", 1)[1]
        elif word.startswith("-"):
            continue
        if "$(…)" in word or "<(…)" in word or "://" in word:
            continue
        looks = word.startswith(("/", "~", ".", "$HOME", "${HOME}")) or "/" in word
        if looks or ("\x00" not in word and os.path.lexists(cwd / word)):
            found.append(word)
        if any(c in word for c in "*?[") and "$" not in word:
            found += _expanded(word, cwd)
    return found


def _expanded(pattern: str, cwd: Path) -> list[str]:
    """What a glob argument matches in `cwd` (a match may be a link that points out).

    Raises Refusal when it matches too much to check."""
    where = pattern if os.path.isabs(pattern) else str(cwd / pattern)
    matches = list(itertools.islice(glob.iglob(where), MAX_GLOB_MATCHES + 1))
    if len(matches) > MAX_GLOB_MATCHES:
        raise Refusal(f"`{pattern}` matches more than {MAX_GLOB_MATCHES} files; name them")
    return matches
