"""The nested groups of an agent's `backend:` block, and the flat keys they still accept.

A group gathers the keys of one concern: `command_line:` the `execute_command` tool
(`workspace/commands.py`), `hosted:` the provider-hosted tools, `media:` the media tools,
`claude_code:` what only `type: claude_code` reads. Users, our docs and the predecessor's configs write these keys
flat (`command_line_sandbox: none`, `enable_web_search: true`, `permission_mode: plan`);
those load exactly as the nested form (`command_line: {sandbox: none}`, `hosted:
{web_search: true}`, `claude_code: {permission_mode: plan}`), because `nest_flat_keys`
moves each into its group before validation (`GROUPS` names each flat key). A key written
both ways is an error, and an error about a flat key names it as it was written
(`problems.py` asks `flat_key`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, field_validator

from massgen.config.strict import Strict


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as error:
        raise ValueError(
            f"`{pattern}` is not a valid regular expression ({error}); "
            "escape a literal special character with a backslash, e.g. `\\.` or `\\(`"
        ) from None
    return pattern


Regex = Annotated[str, AfterValidator(_regex)]


class CommandLineConfig(Strict):
    """`command_line:`, the `execute_command` tool, on the predecessor's keys (flat, each
    `command_line_<name>`; `enabled` is `enable_mcp_command_line`). Patterns are regexes:
    a blocked one matching anywhere refuses a command; with an allow-list, a command must
    start with a match. Commands run locally inside an OS sandbox (`permissions/sandbox.py`),
    not in docker; `none` runs them bare and must be explicit."""

    enabled: bool = False
    execution_mode: Literal["local"] = "local"
    sandbox: Literal["auto", "bubblewrap", "landlock", "none"] = "auto"
    # `none` in a run nobody watches (--automation, serve's API, batch) is refused unless
    # this says the user knows: commands then run with their rights over every file.
    sandbox_acknowledge_unconfined: bool = False
    network: bool = False
    # The bounds of one call: its processes (RLIMIT_NPROC, within the call's namespace)
    # and each process's address space (RLIMIT_AS), in MiB.
    max_processes: int = Field(default=512, ge=8, le=1_000_000)
    max_memory_mb: int = Field(default=8192, ge=64)
    allowed_commands: tuple[Regex, ...] | None = None
    blocked_commands: tuple[Regex, ...] = ()
    # Lowers the per-call timeout (default 60 s); at most `orchestrator.tool_timeout_seconds`.
    timeout_seconds: float | None = Field(default=None, gt=0)
    # Variables passed to commands on purpose (`GITHUB_TOKEN: ${GITHUB_TOKEN}`): commands
    # get only PATH, LANG, LC_*, TERM, TZ, USER of massgen's environment besides these.
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("execution_mode", mode="before")
    @classmethod
    def _local_only(cls, value: Any) -> Any:
        if value in ("docker", "srt"):
            raise ValueError(
                f"`{value}` execution is not supported by this version of massgen yet; "
                "use `local` or remove the key: local commands run in an OS sandbox "
                "(`command_line_sandbox: auto`, bubblewrap or landlock)"
            )
        return value


class HostedConfig(Strict):
    """`hosted:`, provider-hosted tools (flat: `enable_<name>`, the predecessor's keys):
    the provider runs them on its own servers, outside our toolboxes and permission
    engine; the key is the permission. Checked against what the backend's wire offers
    (`Wire.hosted`)."""

    web_search: bool = False
    code_interpreter: bool = False  # OpenAI's name for code execution
    code_execution: bool = False
    x_search: bool = False


MAX_AGENT_TURNS = 500  # the most model calls one Claude Code turn may make


class ClaudeCodeConfig(Strict):
    """`claude_code:`, read by `type: claude_code` only (`backends/claude_code.py`), on the
    predecessor's keys (flat: `claude_code_tools`, `claude_code_disallowed_tools`, and the
    others under their own names): Claude Code's own tools it is given (its names: Read,
    Edit, ...; None: all of them; the predecessor's Claude Code names in `allowed_tools`/
    `disallowed_tools` land in these two), its permission mode, a system prompt in place
    of Claude Code's own (massgen's team instructions follow either), and its model calls
    per turn. Every tool call still passes massgen's permission engine, whatever the mode."""

    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    permission_mode: Literal["default", "acceptEdits", "plan", "bypassPermissions"] | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = Field(default=None, ge=1, le=MAX_AGENT_TURNS)


class MediaConfig(Strict):
    """`media:`, the media tools (`tools/media/`), on the predecessor's keys (flat:
    `enable_<name>`, and `media_tools` for `tools`): generation
    by mode; `multimodal_tools` None: `orchestrator.enable_multimodal_tools` decides;
    `tools`: the predecessor's own understand_* files named in its `custom_tools`, as our
    built-in tools."""

    image_generation: bool = False
    audio_generation: bool = False
    video_generation: bool = False
    multimodal_tools: bool | None = None
    tools: tuple[Literal["understand_image", "understand_audio", "understand_video"], ...] = ()


def _enable(model: type[Strict], *skip: str) -> dict[str, str]:
    return {name: f"enable_{name}" for name in model.model_fields if name not in skip}


def _same(*names: str) -> dict[str, str]:
    return {name: name for name in names}


# Each group's key in `backend:`, its model, and its flat keys' names where they are not
# `<group>_<field>`.
GROUPS: dict[str, tuple[type[Strict], dict[str, str]]] = {
    "command_line": (CommandLineConfig, {"enabled": "enable_mcp_command_line"}),
    "hosted": (HostedConfig, _enable(HostedConfig)),
    "media": (MediaConfig, _enable(MediaConfig, "tools")),
    "claude_code": (
        ClaudeCodeConfig,
        _same("permission_mode", "system_prompt", "append_system_prompt", "max_turns"),
    ),
}


def _flat_names() -> dict[str, tuple[str, str]]:
    names = {}
    for group, (model, renamed) in GROUPS.items():
        for field in model.model_fields:
            names[renamed.get(field, f"{group}_{field}")] = (group, field)
    return names


# Flat key -> (group, field): `command_line_sandbox` -> ("command_line", "sandbox").
FLAT_KEYS: dict[str, tuple[str, str]] = _flat_names()
_FLAT_NAME = {place: flat for flat, place in FLAT_KEYS.items()}


def flat_key(group: str, field: str) -> str | None:
    """The flat name of a group's field (`command_line`, `sandbox` -> `command_line_sandbox`)."""
    return _FLAT_NAME.get((group, field))


def nest_flat_keys(data: Any) -> Any:
    """A backend block with each flat group key moved into its group.

    Raises:
        ValueError: a key written both flat and nested (which one wins would be a guess).
    """
    if not isinstance(data, dict) or not any(key in data for key in FLAT_KEYS):
        return data
    data = dict(data)
    for flat in [key for key in data if key in FLAT_KEYS]:
        group, field = FLAT_KEYS[flat]
        value = data.pop(flat)
        block = data.get(group, {})
        if isinstance(block, BaseModel):
            block = block.model_dump(exclude_unset=True)
        if not isinstance(block, dict):
            continue  # the group's own error ("must be a mapping") says what is wrong
        if field in block:
            raise ValueError(f"`{flat}` and `{group}.{field}` set the same key; keep one of them")
        data[group] = {**block, field: value}
    return data
