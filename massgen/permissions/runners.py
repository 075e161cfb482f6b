"""Commands that run other commands or code given to them, where a rule cannot see it.

    hidden_command(("git", "-c", "alias.x=!rm -rf ~", "x"))
      -> "`git -c alias.x` makes git run a command of its own"

`git -c alias.x='!…'`, `tar --to-command`, `sed e`, `vim -c '!…'` and an interpreter fed
its program on stdin (`python3 - <<EOF`) all run something no rule is written over: the
shell splitter (`shell.py`) records the reason given here as opaque, so the engine treats
the command as high risk (denied headless) and never as the harmless tool it names.
`find -exec`, `xargs`, `sh -c` and `eval` are unwrapped by the splitter itself, and
interpreters given code with `-c`/`-e` are high risk in `risk.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Interpreters whose program, given no script file, comes from stdin (a here-document).
_INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|perl|ruby|php|lua[0-9.]*|"
                           r"Rscript|R|julia|tclsh|wish|irb|guile|racket|sbcl|pwsh|"
                           r"powershell|osascript|jshell|ghci)$")  # fmt: skip
_INFO = frozenset({"--version", "-V", "--help", "-h", "-v", "-version"})
# Editors and debuggers that run their own commands, `:!cmd` and `shell` among them.
_EDITORS = frozenset({"vi", "vim", "nvim", "view", "ex", "vimdiff", "gvim", "rvim", "ed",
                      "emacs", "gdb", "lldb"})  # fmt: skip
# Variables that make the next program run a command, or load code, of their choosing.
RUNNING_VARIABLES = re.compile(r"^(GIT_SSH(_COMMAND)?|GIT_EXTERNAL_DIFF|GIT_PAGER|PAGER|"
                               r"GIT_EDITOR|EDITOR|VISUAL|GIT_CONFIG_\w+|GIT_EXEC_PATH|"
                               r"GIT_ASKPASS|SSH_ASKPASS|LD_PRELOAD|LD_LIBRARY_PATH|BASH_ENV|"
                               r"ENV|PROMPT_COMMAND|PERL5OPT|NODE_OPTIONS|PYTHONSTARTUP|"
                               r"LESSOPEN|MANPAGER)$")  # fmt: skip
# git config keys that are, or name, commands git runs (`!cmd` aliases, pagers, hooks).
_GIT_KEY = re.compile(r"^(alias\.|core\.|credential|diff\.|difftool\.|merge\.|mergetool\.|"
                      r"filter\.|gpg\.|sequence\.|pager\.|uploadpack\.|protocol\.|remote\.|"
                      r"url\.|http\.|include|ssh\.|sendemail\.|interactive\.|web\.|man\.|"
                      r"instaweb\.|submodule\.)", re.IGNORECASE)  # fmt: skip
# Options that name a command for git to run, and the subcommands where a short one does.
_GIT_RUNS = ("--config-env", "--exec-path", "--upload-pack", "--receive-pack", "--exec",
             "--extcmd", "--open-files-in-pager")  # fmt: skip
_GIT_SHORT = {"-O": ("grep",), "-x": ("rebase", "difftool"), "-u": ("clone", "archive")}
_GIT_RUNS_SUB = {"filter-branch": "", "bisect": "run", "submodule": "foreach",
                 "instaweb": "", "daemon": ""}  # fmt: skip
_TAR_RUNS = ("--to-command", "--use-compress-program", "--checkpoint-action", "--info-script",
             "--new-volume-script", "--rsh-command", "--rmt-command")  # fmt: skip


def hidden_command(argv: tuple[str, ...]) -> str | None:
    """Why `argv` runs a command or code it is given, or None."""
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    check = _CHECKS.get(name)
    if check is not None:
        return check(argv[1:])
    if name in _EDITORS:
        return f"`{name}` runs commands of its own (`:!…`, `shell`)"
    if _INTERPRETERS.match(name) and _reads_program_from_stdin(argv[1:]):
        return f"`{name}` reads its program from its input"
    return None


def _reads_program_from_stdin(args: tuple[str, ...]) -> bool:
    if any(a in _INFO for a in args):
        return False
    return all(a == "-" or a.startswith("-") for a in args)


def _git(args: tuple[str, ...]) -> str | None:
    sub = _git_subcommand(args)
    for index, arg in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("-c", "--config") and _GIT_KEY.match(value):
            return f"`git {arg} {value.split('=', 1)[0]}` makes git run a command"
        if arg.startswith(_GIT_RUNS):
            return f"`git {arg.split('=', 1)[0]}` runs a command"
        short = next((s for s in _GIT_SHORT if arg.startswith(s)), None)
        if short is not None and sub in _GIT_SHORT[short]:
            return f"`git {sub} {short}` runs a command"
    if sub in _GIT_RUNS_SUB and _GIT_RUNS_SUB[sub] in ("", *args):
        return f"`git {sub}` runs commands it is given"
    if sub == "config" and any(_GIT_KEY.match(a) for a in args):
        return "`git config` of a key that makes git run a command"
    return None


def _git_subcommand(args: tuple[str, ...]) -> str:
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-c", "-C", "--git-dir", "--work-tree", "--namespace"):
            skip = True
        elif not arg.startswith("-"):
            return arg
    return ""


def _tar(args: tuple[str, ...]) -> str | None:
    for index, arg in enumerate(args):
        if arg.startswith(_TAR_RUNS):
            return f"`tar {arg.split('=', 1)[0]}` runs a command"
        bundled = arg[1:] if arg.startswith("-") and not arg.startswith("--") else ""
        if index == 0 and not arg.startswith("-"):
            bundled = arg  # old style: `tar xIf prog a.tar`
        if "I" in bundled or "F" in bundled:
            return "`tar -I`/`-F` runs a command"
    return None


def _sed(args: tuple[str, ...]) -> str | None:
    scripts, expect, has_flag = [], False, False
    for arg in args:
        if expect:
            scripts.append(arg)
            expect = False
        elif arg in ("-e", "--expression"):
            expect, has_flag = True, True
        elif arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
            has_flag = True
        elif arg in ("-f", "--file") or arg.startswith("--file="):
            return "`sed -f` runs a script file that may hold `e` commands"
    if not has_flag:
        scripts += [a for a in args if not a.startswith("-")][:1]
    if any(sed_executes(script) for script in scripts):
        return "`sed e` runs a command"
    return None


def sed_executes(script: str) -> bool:
    """Whether a sed script holds the `e` command or an `s///e` flag (GNU sed)."""
    i, n = 0, len(script)
    while i < n:
        i = _skip_address(script, i)
        if i >= n:
            return False
        c = script[i]
        if c == "e":
            return True
        if c in "sy" and i + 1 < n:
            i, flags = _after_substitution(script, i + 1)
            if c == "s" and "e" in flags:
                return True
        elif c in "aicrRwWbtTq:":  # the rest of the line is their argument
            end = script.find("\n", i)
            i = n if end < 0 else end
        i += 1
    return False


def _skip_address(script: str, i: int) -> int:
    while i < len(script) and (script[i] in " \t\n;{}!,0123456789$~+" or script[i] == "/"):
        if script[i] == "/":
            end = script.find("/", i + 1)
            i = len(script) if end < 0 else end
        i += 1
    return i


def _after_substitution(script: str, i: int) -> tuple[int, str]:
    """The index past `s/re/rep/flags` (from its delimiter at `i`), and its flags."""
    delimiter, parts, j = script[i], 0, i + 1
    while j < len(script) and parts < 2:
        if script[j] == "\\":
            j += 2
            continue
        if script[j] == delimiter:
            parts += 1
        j += 1
    start = j
    while j < len(script) and script[j] not in ";\n}":
        j += 1
    return j, script[start:j].split("w", 1)[0]  # after `w`: the name of a file to write


def _zip(args: tuple[str, ...]) -> str | None:
    if any(a == "-TT" or a.startswith("--unzip-command") for a in args):
        return "`zip -TT` runs a command"
    return None


def _script(args: tuple[str, ...]) -> str | None:
    if any(a in ("-c", "--command") or a.startswith("--command=") for a in args):
        return "`script -c` runs a command"
    return None


def _exporting(args: tuple[str, ...]) -> str | None:
    for arg in args:
        if RUNNING_VARIABLES.match(arg.split("=", 1)[0]):
            return f"setting `{arg.split('=', 1)[0]}` makes later programs run a command"
    return None


def _deno(args: tuple[str, ...]) -> str | None:
    if args[:1] in (("eval",), ("repl",), ("-e",), ("--eval",)) or not args:
        return "runs code given to it"
    return None


_CHECKS: dict[str, Callable[[tuple[str, ...]], str | None]] = {
    "git": _git,
    "tar": _tar,
    "gtar": _tar,
    "bsdtar": _tar,
    "sed": _sed,
    "gsed": _sed,
    "zip": _zip,
    "script": _script,
    "export": _exporting,
    "declare": _exporting,
    "typeset": _exporting,
    "readonly": _exporting,
    "local": _exporting,
    "deno": _deno,
    "bun": _deno,
}
