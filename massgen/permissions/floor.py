"""The hardline floor: what no rule, grant or approval can allow.

Checked on each simple command after splitting and unwrapping (`shell.py`), so
`sh -c "rm -rf ~"`, `eval 'mkfs /dev/sda'` and `true && rm -rf /` are all caught, and on
each path a call would write (a redirect into `/dev/sda` included).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from massgen.permissions.shell import Simple

_RAW_DISK = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|loop|md|dm-|mapper/)")
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff", "telinit"})
_DISK_TOOLS = re.compile(r"^(mkfs(\..*)?|mke2fs|mkswap|fdisk|sfdisk|parted|wipefs|shred)$")
# Targets of a recursive delete or permission change that would wreck the machine or home.
_ROOTS = frozenset({"/", "/*", "~", "~/", "~/*", "$HOME", "$HOME/", "$HOME/*", "${HOME}",
                    "${HOME}/", "/.", "/..", ".", "./", "*", "..", "../"})  # fmt: skip
_SYSTEM = re.compile(r"^/(bin|boot|dev|etc|lib|lib64|opt|proc|root|sbin|sys|usr|var|home)/?\*?$")


def refusal(simple: Simple) -> str | None:
    """Why the floor refuses this simple command, or None."""
    argv = simple.argv
    if not argv:
        return None
    name = PurePosixPath(argv[0]).name
    args = argv[1:]
    if name == ":(){ :|:& };:":
        return "a fork bomb"
    if name in _POWER or (name == "init" and args[:1] in (("0",), ("6",))):
        return f"`{name}` stops the machine"
    if name == "systemctl" and any(a in ("poweroff", "reboot", "halt") for a in args):
        return "`systemctl` stops the machine"
    if _DISK_TOOLS.match(name):
        return f"`{name}` rewrites a disk"
    if name == "dd" and any(_RAW_DISK.match(a[3:]) for a in args if a.startswith("of=")):
        return "`dd` onto a raw disk"
    if name == "rm" and _recursive(args) and any(_wrecks(a) for a in args):
        return "a recursive delete of the root, a system directory or the home directory"
    if name in ("chmod", "chown", "chgrp") and _recursive(args) and any(_wrecks(a) for a in args):
        return f"a recursive `{name}` of the root, a system directory or the home directory"
    if name == "mv" and args and (args[-1] == "/dev/null" or any(_wrecks(a) for a in args[:-1])):
        return "`mv` of a system path or into /dev/null"
    return None


def write_refusal(target: str) -> str | None:
    """Why the floor refuses writing `target` (a redirect or a Write path), or None."""
    if _RAW_DISK.match(target):
        return f"a write to the raw disk `{target}`"
    return None


def _recursive(args: tuple[str, ...]) -> bool:
    for arg in args:
        if arg in ("--recursive", "-R", "-r"):
            return True
        if arg.startswith("-") and not arg.startswith("--") and ("r" in arg or "R" in arg):
            return True
    return False


def _wrecks(arg: str) -> bool:
    return arg in _ROOTS or bool(_SYSTEM.match(arg)) or arg.rstrip("/") in ("", "~", "$HOME")
