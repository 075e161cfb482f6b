"""What each of Claude Code's own tools does, as effects the permission engine judges.

Claude Code runs its tools in its own process; massgen decides each call before it runs
(`claude_code.py` asks at the PreToolUse hook, for every call). A tool whose effects
cannot be told raises `Unjudgeable`, which the engine records as a refusal: nothing
unknown runs. Bash is one of them: Claude Code would run it outside massgen's sandbox,
so it is refused with a pointer to the sandboxed `execute_command`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from massgen.core.effects import Effect, External, Net, Read, Write

# The in-process MCP server that carries massgen's tools and workflow actions into
# Claude Code: its tools are judged where they run (the member's guarded toolbox).
SERVER = "massgen"
OWN_PREFIX = f"mcp__{SERVER}__"

_READS = {"Read": "file_path", "NotebookRead": "notebook_path"}
_WRITES = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path"}
_WRITES |= {"NotebookEdit": "notebook_path"}
_SEARCHES = ("Grep", "Glob", "LS")  # read under `path`, the working directory by default
# Claude Code's bookkeeping: no effect outside its own session.
_NO_EFFECT = frozenset({"TodoWrite", "ExitPlanMode", "ToolSearch", "ListAgents"})
_SHELL = frozenset({"Bash", "BashOutput", "KillShell", "Monitor"})
BASH_REFUSED = (
    "Claude Code's own shell would run outside massgen's sandbox; run commands with the "
    "`execute_command` tool (enable it with `enable_mcp_command_line: true`)"
)


class Unjudgeable(ValueError):
    """The call's effects cannot be told, so it may not run."""


def effects(name: str, arguments: Mapping[str, Any], cwd: Path) -> tuple[Effect, ...]:
    """The effects of one Claude Code tool call made in `cwd`.

    Raises:
        Unjudgeable: a shell call, or a tool with no known effects and no MCP server.
    """
    if name.startswith(OWN_PREFIX) or name in _NO_EFFECT:
        return ()
    if name in _SHELL:
        raise Unjudgeable(BASH_REFUSED)
    if name in _READS:
        return (Read(_path(arguments, _READS[name], cwd)),)
    if name in _WRITES:
        return (Write(_path(arguments, _WRITES[name], cwd)),)
    if name in _SEARCHES:
        return (Read(_path(arguments, "path", cwd, default=".")),)
    if name == "WebFetch":
        return (Net(_host(arguments.get("url"))),)
    if name == "WebSearch":
        return (External("claude_code", "WebSearch", read_only=True),)
    if name.startswith("mcp__"):
        server, _, tool = name.removeprefix("mcp__").partition("__")
        return (External(server, tool or server, untrusted_server=True),)
    raise Unjudgeable(f"massgen cannot tell what Claude Code's `{name}` tool does")


def _path(arguments: Mapping[str, Any], key: str, cwd: Path, default: str = "") -> Path:
    value = arguments.get(key) or default
    if not isinstance(value, str) or not value:
        raise Unjudgeable(f"`{key}` is not a path")
    path = Path(value).expanduser()
    return path if path.is_absolute() else cwd / path


def _host(url: Any) -> str:
    host = urlsplit(url).hostname if isinstance(url, str) else None
    if not host:
        raise Unjudgeable("`url` is not a URL")
    return host
