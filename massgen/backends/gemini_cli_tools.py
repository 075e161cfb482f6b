"""What Gemini CLI's tool calls do, as effects the permission engine judges, and the
files and environment that make Gemini CLI ask massgen about every call.

Gemini CLI asks its client (`session/request_permission`) only for calls its policy
engine says `ask_user` for. massgen gives it an admin-tier policy (the highest tier, so
no user, workspace or extension policy loosens it) in which every tool asks, and its
shell and memory tools are denied outright: the shell would run outside massgen's
sandbox, and the memory tool writes `~/.gemini/GEMINI.md`, outside the workspace.

A permission request names the call's kind (read, edit, search, fetch, ...) and the
paths it touches (`locations`), not its raw arguments; the effects are told from those.
A call whose effects cannot be told raises `Unjudgeable`, which the engine records as a
refusal: nothing unknown runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from massgen.core.effects import Effect, External, Read, Write

COMMAND = "gemini"
NPM_PACKAGE = "@google/gemini-cli@0.61.0"  # the version massgen is tested with
# Gemini CLI's own tools that would act outside what massgen can hold: denied by the
# policy massgen writes, before they ever ask.
DENIED_TOOLS = (
    "run_shell_command",
    "list_background_processes",
    "read_background_output",
    "save_memory",
    "invoke_agent",
    "activate_skill",
)
SHELL_REFUSED = (
    "Gemini CLI's own shell would run outside massgen's sandbox; it is switched off for "
    "Gemini CLI members"
)
# Gemini CLI's bookkeeping tools: no effect outside its own session.
_NO_EFFECT = frozenset({"write_todos", "update_topic", "enter_plan_mode", "exit_plan_mode"})
_WEB = frozenset({"web_fetch", "google_web_search"})
_READ_KINDS = frozenset({"read", "search"})
_WRITE_KINDS = frozenset({"edit", "delete", "move"})
# The CLI names a call `<tool>__<tool>_<time>_<n>` (or `<tool>-<time>-<n>`) unless the
# model gave it an id.
_CALL_ID = re.compile(r"^(?P<name>[a-z][a-z0-9_]*?)(?:__|-\d)")


class Unjudgeable(ValueError):
    """The call's effects cannot be told, so it may not run."""


def policy_toml() -> str:
    """The admin policy: every tool asks massgen; the ones massgen cannot hold are denied."""
    denied = ", ".join(json.dumps(name) for name in DENIED_TOOLS)
    return (
        "[[rule]]\n"
        f"toolName = [{denied}]\n"
        'decision = "deny"\n'
        "priority = 999\n"
        f"denyMessage = {json.dumps(SHELL_REFUSED)}\n\n"
        "[[rule]]\n"
        'toolName = "*"\n'
        'decision = "ask_user"\n'
        "priority = 998\n"
    )


def system_settings(web: bool) -> dict[str, Any]:
    """Settings laid over the user's (the system tier wins): the approval mode that asks,
    no telemetry or update checks, and the web tools only with `enable_web_search`."""
    exclude = [*DENIED_TOOLS, *(() if web else sorted(_WEB))]
    return {
        "general": {"defaultApprovalMode": "default", "disableAutoUpdate": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "tools": {"exclude": exclude},
        "security": {"folderTrust": {"enabled": False}},
    }


def tool_name(call_id: str, title: str, kind: str) -> str:
    """The tool a permission request is for: from the CLI's call id, else its kind."""
    match = _CALL_ID.match(call_id)
    if match:
        return match["name"]
    return f"gemini_{kind or 'other'}"


def effects(name: str, arguments: Mapping[str, Any], cwd: Path) -> tuple[Effect, ...]:
    """The effects of one Gemini CLI tool call in `cwd`, from its permission request
    (`arguments`: kind, title, locations).

    Raises:
        Unjudgeable: a shell or unknown tool, or a request without what its kind needs.
    """
    kind = str(arguments.get("kind") or "")
    paths = paths_of(arguments, cwd)
    if name in DENIED_TOOLS or kind == "execute":
        raise Unjudgeable(SHELL_REFUSED)
    # The kind and paths decide; the name only for what they leave open.
    if kind in _WRITE_KINDS:
        if not paths:
            raise Unjudgeable(f"Gemini CLI's `{name}` named no file it changes")
        return tuple(Write(p) for p in paths)
    if kind in _READ_KINDS:
        return tuple(Read(p) for p in paths or [cwd])
    if kind == "fetch" or name in _WEB:
        return (External("gemini_cli", name, read_only=True),)
    if name in _NO_EFFECT and _own_id(name, str(arguments.get("call_id") or "")):
        return ()
    raise Unjudgeable(f"massgen cannot tell what Gemini CLI's `{name}` tool does")


def _own_id(name: str, call_id: str) -> bool:
    """The call id is the one Gemini CLI itself gives its own tool (not a model's)."""
    return re.fullmatch(rf"{re.escape(name)}__{re.escape(name)}_\d+_\d+", call_id) is not None


def paths_of(arguments: Mapping[str, Any], cwd: Path) -> list[Path]:
    """The paths a permission request names (`locations`), absolute."""
    locations = arguments.get("locations")
    out = []
    for location in locations if isinstance(locations, list) else []:
        value = location.get("path") if isinstance(location, dict) else None
        if isinstance(value, str) and value:
            path = Path(value).expanduser()
            out.append(path if path.is_absolute() else cwd / path)
    return out
