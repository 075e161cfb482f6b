"""An agent's `backend:` block (`BackendConfig`), and `Strict`, the base of every config
model: unknown keys are errors, values are frozen."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_type_hints

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    create_model,
    field_validator,
    model_validator,
)

from massgen.config.custom_tools import CustomTool
from massgen.config.mcp import McpServer, normalise_servers, unique_names
from massgen.config.permissions import PermissionsConfig, permissions_block
from massgen.config.uploads import MAX_FILES, Upload, UploadFile
from massgen.core.types import GenerationParams, HostedTool


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


VotingSensitivity = Literal["lenient", "balanced", "strict"]
Novelty = Literal["lenient", "balanced", "strict"]
FinalStrategy = Literal["winner_present", "winner_reuse", "synthesize"]


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
# An Anthropic beta's name, as its docs write it (`computer-use-2025-01-24`).
BetaName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]{0,79}$")]


# The config keys that switch on a provider-hosted tool, and the tool each one names.
HOSTED_KEYS: tuple[tuple[str, HostedTool], ...] = (
    ("enable_web_search", "web_search"),
    ("enable_code_interpreter", "code_execution"),
    ("enable_code_execution", "code_execution"),
    ("enable_x_search", "x_search"),
    ("upload_files", "file_search"),  # a non-empty list switches it on
)


# The keys only `type: claude_code` reads, and the most model calls one of its turns may make.
CLAUDE_CODE_KEYS = (
    "claude_code_tools",
    "claude_code_disallowed_tools",
    "permission_mode",
    "system_prompt",
    "append_system_prompt",
    "max_turns",
)
MAX_AGENT_TURNS = 500


class _Connection(Strict):
    type: str
    model: str | None = None
    api_key: str | None = None
    base_url: str | None = None
    api_version: str | None = None


def _generation_fields() -> dict[str, Any]:
    """`GenerationParams`' fields as config fields: the same names, types and defaults, with
    the bounds each declares. Nothing else reaches the provider except `extra_body`."""
    hints = get_type_hints(GenerationParams)
    return {f.name: (hints[f.name], Field(None, **f.metadata)) for f in fields(GenerationParams)}


# The connection's keys, then the generation parameters (in the order of the declaration),
# then the rest. mypy cannot follow a class built at run time: massgen's code reads the
# parameters through `BackendConfig.generation_params()`, never as attributes.
if TYPE_CHECKING:
    _WithGeneration = _Connection
else:
    _WithGeneration = create_model(
        "_WithGeneration", __base__=_Connection, __module__=__name__, **_generation_fields()
    )


class BackendConfig(_WithGeneration):
    # Ask the model for a JSON action instead of function calls (models without tools).
    structured_actions: bool = False
    # Per-request limits for this backend.
    request_timeout_seconds: float = Field(default=300, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    # MCP servers this agent may call (`config/mcp.py`), and filters over all of them.
    mcp_servers: tuple[McpServer, ...] = ()
    allowed_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    # The `execute_command` tool (`workspace/commands.py`), the predecessor's keys. Patterns
    # are regexes: a blocked one matching anywhere refuses a command; with an allow-list, a
    # command must start with a match. Commands run locally inside an OS sandbox
    # (`permissions/sandbox.py`), not in docker; `none` runs them bare and must be explicit.
    enable_mcp_command_line: bool = False
    command_line_execution_mode: Literal["local"] = "local"
    command_line_sandbox: Literal["auto", "bubblewrap", "landlock", "none"] = "auto"
    # `none` in a run nobody watches (--automation, serve's API, batch) is refused unless
    # this says the user knows: commands then run with their rights over every file.
    command_line_sandbox_acknowledge_unconfined: bool = False
    command_line_network: bool = False
    # The bounds of one call: its processes (RLIMIT_NPROC, within the call's namespace)
    # and each process's address space (RLIMIT_AS), in MiB.
    command_line_max_processes: int = Field(default=512, ge=8, le=1_000_000)
    command_line_max_memory_mb: int = Field(default=8192, ge=64)
    command_line_allowed_commands: tuple[Regex, ...] | None = None
    command_line_blocked_commands: tuple[Regex, ...] = ()
    # Lowers the per-call timeout (default 60 s); at most `orchestrator.tool_timeout_seconds`.
    command_line_timeout_seconds: float | None = Field(default=None, gt=0)
    # Variables passed to commands on purpose (`GITHUB_TOKEN: ${GITHUB_TOKEN}`): commands
    # get only PATH, LANG, LC_*, TERM, TZ, USER of massgen's environment besides these.
    command_line_env: dict[str, str] = Field(default_factory=dict)

    @field_validator("command_line_execution_mode", mode="before")
    @classmethod
    def _local_only(cls, value: Any) -> Any:
        if value in ("docker", "srt"):
            raise ValueError(
                f"`{value}` execution is not supported by this version of massgen yet; "
                "use `local` or remove the key: local commands run in an OS sandbox "
                "(`command_line_sandbox: auto`, bubblewrap or landlock)"
            )
        return value

    # The agent's workspace, `.massgen/workspaces/<run>/<cwd>/` (the predecessor's key): a
    # name, not a path; setting it gives the agent the file tools (`massgen/workspace/`).
    cwd: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    # `type: claude_code` only (`backends/claude_code.py`), the predecessor's keys: Claude
    # Code's own tools it is given (its names: Read, Edit, ...; None: all of them; the
    # predecessor's Claude Code names in `allowed_tools`/`disallowed_tools` land in these
    # two), its permission mode, a system prompt in place of Claude Code's own (massgen's
    # team instructions follow either), and its model calls per turn. Every tool call
    # still passes massgen's permission engine, whatever the mode.
    claude_code_tools: tuple[str, ...] | None = None
    claude_code_disallowed_tools: tuple[str, ...] = ()
    permission_mode: Literal["default", "acceptEdits", "plan", "bypassPermissions"] | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = Field(default=None, ge=1, le=MAX_AGENT_TURNS)
    # `type: codex` only (`backends/codex.py`): the Codex CLI to run, where it is not
    # `codex` on PATH (or `$MASSGEN_CODEX_PATH`).
    codex_path: str | None = Field(default=None, min_length=1)
    # Provider-hosted tools (the predecessor's keys): the provider runs them on its own
    # servers, outside our toolboxes and permission engine; the key is the permission.
    # Checked against what the backend's wire offers (`Wire.hosted`).
    enable_web_search: bool = False
    enable_code_interpreter: bool = False  # OpenAI's name for code execution
    enable_code_execution: bool = False
    enable_x_search: bool = False
    # Strict tool use (Anthropic's structured outputs for tools): every tool definition
    # carries `strict: true`, so the model's tool inputs always match their schemas.
    # Checked against the backend's wire (`Wire.strict_tools`).
    enable_strict_tool_use: bool = False
    # Anthropic beta features by name, sent as the `anthropic-beta` header of every
    # request (`Wire.beta_headers`); e.g. the predecessor's computer-use configs'.
    betas: tuple[BetaName, ...] = Field(default=(), max_length=16)
    # This agent's role and rules for the permission engine (`config/permissions.py`).
    permissions: PermissionsConfig | None = None
    # The user's Python functions as tools (`config/custom_tools.py`, `tools/python.py`).
    custom_tools: tuple[CustomTool, ...] = ()
    # Documents for the provider's file search (`config/uploads.py`), uploaded at run
    # start and deleted at its end (`massgen/uploads.py`).
    upload_files: tuple[Upload, ...] = Field(default=(), max_length=MAX_FILES)
    # Media tools (`tools/media_plan.py`, `tools/media.py`), the predecessor's keys; None:
    # `orchestrator.enable_multimodal_tools` decides. `media_tools`: the predecessor's own
    # understand_* files named in its `custom_tools`, as our built-in tools.
    enable_image_generation: bool = False
    enable_audio_generation: bool = False
    enable_video_generation: bool = False
    enable_multimodal_tools: bool | None = None
    media_tools: tuple[
        Literal["understand_image", "understand_audio", "understand_video"], ...
    ] = ()

    def hosted_keys(self) -> tuple[tuple[str, HostedTool], ...]:
        """(config key, hosted tool) for each hosted-tool key this config switches on."""
        return tuple((key, tool) for key, tool in HOSTED_KEYS if self._switched_on(key))

    def _switched_on(self, key: str) -> bool:
        if key == "upload_files":  # media entries are model input, not file search
            return any(isinstance(f, UploadFile) for f in self.upload_files)
        return bool(getattr(self, key))

    def hosted_tools(self) -> tuple[HostedTool, ...]:
        """The hosted tools every request carries; `file_search` joins them once its files
        are uploaded (`massgen/uploads.py`)."""
        tools = (tool for _, tool in self.hosted_keys() if tool != "file_search")
        return tuple(dict.fromkeys(tools))

    @field_validator("permissions", mode="before")
    @classmethod
    def _permissions_block(cls, value: Any) -> Any:
        return permissions_block(value)

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _servers_as_list(cls, value: Any) -> Any:
        return normalise_servers(value)

    @model_validator(mode="after")
    def _unique_servers(self) -> BackendConfig:
        unique_names(self.mcp_servers)
        return self

    @model_validator(mode="after")
    def _claude_code_keys(self) -> BackendConfig:
        if self.type != "claude_code":
            given = [key for key in CLAUDE_CODE_KEYS if getattr(self, key) not in (None, ())]
            if given:
                raise ValueError(
                    f"`{'`, `'.join(given)}` configure Claude Code, and this backend is "
                    f"`type: {self.type}`; remove them, or use type: claude_code"
                )
        if self.type != "codex" and self.codex_path is not None:
            raise ValueError(
                f"`codex_path` names the Codex CLI, and this backend is `type: {self.type}`; "
                "remove it, or use type: codex"
            )
        return self

    def generation_params(self) -> GenerationParams:
        """The generation parameters this config sets; an empty `stop` or `extra_body` is
        the same as none."""
        values = {f.name: _unset_if_empty(getattr(self, f.name)) for f in fields(GenerationParams)}
        return GenerationParams(**values)


def _unset_if_empty(value: Any) -> Any:
    return None if isinstance(value, tuple | dict) and not value else value
