"""The risk default: what happens to a subject no rule matched.

reads inside the workspace, peer snapshots, context paths     allow (low)
writes inside the agent's own workspace                       allow (low)
context-path writes by the final presenter, where permitted   ask (medium)
anything else on the file system                              deny: outside the managed paths
commands known to be read-only                                allow (low)
other commands                                                ask (medium; high for sudo,
                                                              network clients, recursive rm,
                                                              interpreter code, ...)
read-only tools of a trusted MCP server                       allow (low)
other tools of a trusted MCP server, the user's Python tools  ask (medium)
tools of an MCP server not marked `trusted: true`             ask (high: denied headless
                                                              unless a rule allows them)
network egress, anything opaque                               ask (high)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from massgen.core.toolbox import UNKNOWN_SERVER
from massgen.permissions.approval import Risk
from massgen.permissions.paths import Zone
from massgen.permissions.subjects import Subject

Verdict = Literal["allow", "ask", "deny"]

UNTRUSTED_MCP = (
    "a tool of the MCP server `{server}`, which is not marked `trusted: true`: its effects "
    "are unknown, so a run nobody watches denies it; allow the server with "
    "the rule `mcp__{server}__*` in `permissions.rules.allow`, or mark it `trusted: true`"
)

_SAFE = frozenset(
    [
        "ls",
        "cat",
        "head",
        "tail",
        "pwd",
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "wc",
        "sort",
        "uniq",
        "cut",
        "tr",
        "diff",
        "cmp",
        "file",
        "stat",
        "du",
        "df",
        "which",
        "type",
        "true",
        "false",
        "test",
        "[",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "date",
        "whoami",
        "id",
        "uname",
        "tree",
        "nl",
        "od",
        "hexdump",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "cksum",
        "seq",
        "sleep",
        "cd",
        "column",
        "fold",
        "expand",
        "comm",
        "paste",
        "jq",
    ]
)
_SAFE_GIT = frozenset(
    [
        "status",
        "diff",
        "log",
        "show",
        "branch",
        "rev-parse",
        "ls-files",
        "blame",
        "grep",
        "describe",
    ]
)
_HIGH = frozenset(
    [
        "sudo",
        "su",
        "doas",
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "telnet",
        "ftp",
        "socat",
        "chmod",
        "chown",
        "chgrp",
        "dd",
        "kill",
        "killall",
        "pkill",
        "crontab",
        "systemctl",
        "launchctl",
        "service",
        "mount",
        "umount",
        "iptables",
        "useradd",
        "userdel",
        "passwd",
        "visudo",
        "at",
    ]
)
_INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php|"
                           r"lua|Rscript|osascript|pwsh|powershell|tclsh|awk|gawk|nawk)$")  # fmt: skip
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-p", "-r", "--eval", "--print", "-m"})
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*getline|\bprint[^;}]*\|")
_PACKAGERS = frozenset(
    ["npm", "pnpm", "yarn", "twine", "cargo", "docker", "gh", "pip", "pip3", "uv", "gem", "go"]
)
_PUBLISH = re.compile(r"\b(publish|upload|release|push|deploy)\b")


@dataclass(frozen=True, slots=True)
class Zones:
    """The managed paths of one agent's call (canonical roots)."""

    workspace: Path | None = None
    readable: tuple[Path, ...] = ()  # peer snapshots, the previous turn, context paths
    writable: tuple[Path, ...] = ()  # context paths the final presenter may write
    protected: tuple[Path, ...] = ()  # never written

    def in_workspace(self, path: Path) -> bool:
        return self.workspace is not None and Zone(self.workspace).holds(path)


def default(subject: Subject, zones: Zones, phase: str) -> tuple[Verdict, Risk, str]:
    match subject.kind:
        case "read":
            return _read(subject, zones)
        case "write" | "delete":
            return _write(subject, zones, phase)
        case "command":
            risk = command_risk(subject.argv, subject.dynamic)
            verdict: Verdict = "allow" if risk == "low" else "ask"
            return verdict, risk, f"command risk {risk}"
        case "mcp":
            if subject.read_only:
                return "allow", "low", "read-only tool of a trusted MCP server"
            if subject.target.startswith(UNKNOWN_SERVER):  # its toolbox cannot say what it does
                return "ask", "high", "a tool whose toolbox declares no effects"
            if subject.untrusted:  # asking nobody must not mean yes
                return "ask", "high", UNTRUSTED_MCP.format(server=subject.target.split("/")[0])
            return "ask", "medium", "external tool with unknown effects"
        case "fetch":
            return "ask", "high", "network access"
        case "opaque":
            return "ask", "high", subject.target
    return "deny", "high", f"unknown subject {subject.kind}"


def _read(subject: Subject, zones: Zones) -> tuple[Verdict, Risk, str]:
    assert subject.path is not None
    if zones.in_workspace(subject.path) or any(Zone(r).holds(subject.path) for r in zones.readable):
        return "allow", "low", "read inside the managed paths"
    return "deny", "high", f"`{subject.path}` is outside the managed paths"


def _write(subject: Subject, zones: Zones, phase: str) -> tuple[Verdict, Risk, str]:
    path = subject.path
    assert path is not None
    if any(Zone(p).holds(path) for p in zones.protected):
        return "deny", "high", f"`{path}` is protected"
    if zones.in_workspace(path):
        return "allow", "low", "write inside the agent's workspace"
    if any(Zone(r).holds(path) for r in zones.writable):
        if phase == "presentation":
            return "ask", "medium", "the final presenter writes to a context path"
        return "deny", "high", "context paths are read-only while agents coordinate"
    if any(Zone(r).holds(path) for r in zones.readable):
        return "deny", "high", f"`{path}` is read-only"
    return "deny", "high", f"`{path}` is outside the managed paths"


def command_risk(argv: tuple[str, ...], dynamic: bool = False) -> Risk:
    """The predecessor's classifier, over one simple command (already unwrapped)."""
    if not argv:
        return "low"
    name = PurePosixPath(argv[0]).name
    args = argv[1:]
    if name in _HIGH or re.match(r"^mkfs|^fdisk", name):
        return "high"
    if _INTERPRETERS.match(name) and any(a in _CODE_FLAGS or a.startswith("-c") for a in args):
        return "high"
    if name in ("awk", "gawk", "nawk", "mawk") and any(_AWK_RUNS.search(a) for a in args):
        return "high"
    if name == "rm" and any(a.startswith("-") and "r" in a.lower() for a in args):
        return "high"
    if name == "git":
        return _git_risk(args)
    installs = _PUBLISH.search(" ".join(args)) or "install" in args or "add" in args
    if name in _PACKAGERS and installs:
        return "high"
    if name in ("sh", "bash", "zsh", "dash", "eval", "xargs", "find") and dynamic:
        return "high"
    if name == "find" and any(a in ("-delete", "-fprint", "-fprintf", "-fls") for a in args):
        return "medium"
    if name in _SAFE:
        return "low"
    return "medium"


def _git_risk(args: tuple[str, ...]) -> Risk:
    sub = next((a for a in args if not a.startswith("-")), "")
    text = " ".join(args)
    if sub == "push" or "--hard" in text or (sub == "clean" and "-f" in text):
        return "high"
    if sub in _SAFE_GIT and "--output" not in text:
        return "low"
    return "medium"
