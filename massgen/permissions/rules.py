"""Rules users can read, in two spellings that mean the same.

Claude-Code style                     the predecessor's `permissions.rules`
    Command(git push *)                   command(git push *)
    Read(./src/**)   Read(//etc/hosts)    read_file(src/*)   read_file(/etc/hosts)
    Write(~/notes/**)  Edit(...)          write_file(...)
    Fetch(domain:example.com)             read_url(https://example.com/*)
    mcp__server__tool  mcp__server__*     mcp(server/tool)   mcp(server/*)
    Command  Read  Write  Fetch (bare: everything of that kind)     command  read_file  *

Commands match word by word, on each simple command of a chain (`shell.py`): a `*`
word matches any number of words, a `*` inside a word any characters of it
(`git push:*` is `git push *`); a rule also matches when it globs the command's words
joined by spaces, as the predecessor's `command(git*)` did. Claude-style paths use gitignore syntax: `//` is
absolute, `~/` the home directory, `/x`, `./x` and `x/y` relative to the project
directory, and a pattern without `/` (`*.env`) matches that name at any depth; a
matched directory covers everything inside it. The predecessor's path patterns are
`fnmatch` (a `*` crosses `/`), absolute or relative to the project directory.

A rule that can never match (an empty specifier, an unknown tool, a `Fetch` without
`domain:`) raises `RuleError`, which the config loader reports with file and key.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from massgen.core.globs import translate as _translate
from massgen.permissions.paths import case_insensitive, home
from massgen.permissions.subjects import Subject

Bucket = Literal["deny", "ask", "allow"]
BUCKETS: tuple[Bucket, ...] = ("deny", "ask", "allow")

_CLAUDE = {"Command": "command", "Bash": "command", "Read": "read", "Write": "write",
           "Edit": "write", "MultiEdit": "write", "Delete": "write", "Fetch": "fetch",
           "WebFetch": "fetch"}  # fmt: skip
_LEGACY = {"command": "command", "read_file": "read", "write_file": "write",
           "read_url": "fetch", "mcp": "mcp", "*": "any"}  # fmt: skip
_FORM = re.compile(r"^([A-Za-z_*][A-Za-z0-9_]*|\*)(?:\((.*)\))?$", re.S)
_GLOB = re.compile(r"[*?\[]")

FIX = (
    "write e.g. `Command(git status)`, `Read(./src/**)`, `Write(//abs/dir/**)`, "
    "`Fetch(domain:example.com)`, `mcp__server__tool`, or `command(git *)`"
)


class RuleError(ValueError):
    """A rule that can never match; the message says why and how to write it."""


@dataclass(frozen=True, slots=True)
class Rule:
    text: str  # as the user wrote it
    kind: str  # command | read | write | fetch | mcp | any
    matches: Callable[[Subject], bool] = field(compare=False, repr=False)


def parse(text: str, project: Path) -> Rule:
    """Raises RuleError for a rule that can never match."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError("a rule is empty")
    if "\x00" in text or "\n" in text:
        raise RuleError(f"rule `{text!r}` holds a NUL or newline character")
    text = text.strip()
    if text.startswith("mcp__"):
        return _mcp_claude(text)
    m = _FORM.match(text)
    if m is None:
        raise RuleError(f"`{text}` is not a rule")
    name, spec = m.group(1), m.group(2)
    if spec is not None and not spec.strip():
        raise RuleError(f"`{text}` has an empty specifier and can never match")
    if name in _CLAUDE:
        return _claude(text, _CLAUDE[name], spec, project)
    if name in _LEGACY:
        return _legacy(text, _LEGACY[name], spec, project)
    raise RuleError(f"`{name}` in `{text}` is not a tool a rule can name")


def parse_all(texts: Iterable[str], project: Path) -> tuple[Rule, ...]:
    return tuple(parse(t, project) for t in texts)


# --- the two spellings -----------------------------------------------------------------


def _claude(text: str, kind: str, spec: str | None, project: Path) -> Rule:
    if spec is None:
        return Rule(text, kind, _of_kind(kind))
    spec = spec.strip()
    if kind == "command":
        return Rule(text, kind, _command(text, spec))
    if kind == "fetch":
        if not spec.startswith("domain:") or not spec[7:].strip():
            raise RuleError(f"`{text}` can never match: a Fetch rule names `domain:<host>`")
        host = spec[7:].strip().lower()
        return Rule(text, kind, lambda s: s.kind == "fetch" and fnmatch.fnmatchcase(s.target, host))
    body = _gitignore(spec, project)
    exact, folded = re.compile(body), re.compile(body, re.IGNORECASE)
    return Rule(
        text, kind, _path_rule(kind, lambda p, i: (folded if i else exact).fullmatch(p) is not None)
    )


def _legacy(text: str, kind: str, spec: str | None, project: Path) -> Rule:
    if spec is None or spec.strip() == "*":
        return Rule(text, kind, _of_kind(kind))
    spec = spec.strip()
    if kind == "any":
        raise RuleError(f"`{text}`: `*` takes no specifier")
    if kind == "command":
        return Rule(text, kind, _command(text, spec))
    if kind == "fetch":
        host = (urlsplit(spec).hostname or "") if "://" in spec else spec.split("/")[0]
        if not host:
            raise RuleError(f"`{text}` names no host and can never match")
        host = host.lower()
        return Rule(text, kind, lambda s: s.kind == "fetch" and fnmatch.fnmatchcase(s.target, host))
    if kind == "mcp":
        return Rule(text, kind, _mcp_pattern(spec))
    pattern = _anchor(spec, project)
    folded = pattern.casefold()
    return Rule(
        text,
        kind,
        _path_rule(
            kind,
            lambda p, i: (
                fnmatch.fnmatchcase(p.casefold(), folded) if i else fnmatch.fnmatchcase(p, pattern)
            ),
        ),
    )


def _mcp_claude(text: str) -> Rule:
    parts = text[5:].split("__", 1)
    server = parts[0]
    tool = parts[1] if len(parts) > 1 else "*"
    if not server or not tool:
        raise RuleError(f"`{text}` names no server or tool; write `mcp__<server>__<tool>`")
    return Rule(text, "mcp", _mcp_pattern(f"{server}/{tool}"))


def _mcp_pattern(spec: str) -> Callable[[Subject], bool]:
    def matches(s: Subject) -> bool:
        if s.kind != "mcp":
            return False
        tool = s.target.split("/", 1)[-1]
        return fnmatch.fnmatchcase(s.target, spec) or (
            "/" not in spec and fnmatch.fnmatchcase(tool, spec)
        )

    return matches


# --- matchers ----------------------------------------------------------------------------


def _of_kind(kind: str) -> Callable[[Subject], bool]:
    if kind == "any":
        return lambda s: s.kind != "opaque"
    if kind == "write":
        return lambda s: s.kind in ("write", "delete")
    return lambda s: s.kind == kind


def _path_rule(kind: str, test: Callable[[str, bool], bool]) -> Callable[[Subject], bool]:
    """`test(path, fold)`: `fold` where the file system ignores case, so that a rule
    cannot be dodged by spelling a name in another case."""
    kinds = ("write", "delete") if kind == "write" else (kind,)

    def matches(s: Subject) -> bool:
        if s.kind not in kinds or s.path is None:
            return False
        return test(s.path.as_posix(), case_insensitive(s.path.parent))

    return matches


def _command(text: str, spec: str) -> Callable[[Subject], bool]:
    if spec.endswith(":*"):
        spec = spec[:-2] + " *"
    try:
        words = tuple(shlex.split(spec))
    except ValueError as error:
        raise RuleError(f"`{text}` cannot be split into words ({error})") from None
    if not words:
        raise RuleError(f"`{text}` has an empty command and can never match")

    def matches(s: Subject) -> bool:
        if s.kind != "command" or s.dynamic:
            return False
        # Word by word, or (the predecessor's `command(git*)`) as a glob over the words.
        return _words_match(words, s.argv) or fnmatch.fnmatchcase(" ".join(s.argv), spec)

    return matches


def _words_match(pattern: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    if not pattern:
        return not argv
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        return any(_words_match(rest, argv[i:]) for i in range(len(argv) + 1))
    return bool(argv) and fnmatch.fnmatchcase(argv[0], head) and _words_match(rest, argv[1:])


def _gitignore(spec: str, project: Path) -> str:
    """A regex over absolute posix paths for a Claude-style path specifier."""
    spec = spec.rstrip("/") or "/"
    if spec.startswith("//"):
        anchored = "/" + spec[2:].lstrip("/")
    elif spec == "~" or spec.startswith("~/"):
        anchored = home().as_posix() + spec[1:]
    elif "/" not in spec:  # a bare name: at any depth
        return "(?:.*/)?" + _translate(spec) + "(?:/.*)?"
    else:
        rel = spec.lstrip("/")
        anchored = (project / rel[2:] if rel.startswith("./") else project / rel).as_posix()
    anchored = _real_prefix(anchored)
    return _translate(anchored) + "(?:/.*)?"


def _anchor(spec: str, project: Path) -> str:
    if spec == "~" or spec.startswith("~/"):
        spec = home().as_posix() + spec[1:]
    if not spec.startswith("/"):
        spec = (project / spec).as_posix()
    return _real_prefix(spec)


def _real_prefix(pattern: str) -> str:
    """`pattern` with the part before its first glob resolved (symlinks, `..`), as the
    paths it is compared with are."""
    m = _GLOB.search(pattern)
    cut = pattern.rfind("/", 0, m.start()) if m else len(pattern)
    head, tail = pattern[:cut] or "/", pattern[cut:]
    real = os.path.realpath(head)
    return (real.rstrip("/") + tail) if tail else real
