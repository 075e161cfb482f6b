"""An agent's `backend:` block (`BackendConfig`). Its nested groups, and the flat keys
they still accept, are `config/backend_groups.py`."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_type_hints

from pydantic import Field, create_model, field_validator, model_validator

from massgen.config.backend_groups import (
    FLAT_KEYS,
    ClaudeCodeConfig,
    CommandLineConfig,
    HostedConfig,
    MediaConfig,
    flat_key,
    nest_flat_keys,
)
from massgen.config.custom_tools import CustomTool
from massgen.config.mcp import McpServer, normalise_servers, unique_names
from massgen.config.permissions import PermissionsConfig, permissions_block
from massgen.config.strict import Strict
from massgen.config.uploads import MAX_FILES, Upload, UploadFile
from massgen.core.types import GenerationParams, HostedTool

VotingSensitivity = Literal["lenient", "balanced", "strict"]
Novelty = Literal["lenient", "balanced", "strict"]
FinalStrategy = Literal["winner_present", "winner_reuse", "synthesize"]


# An Anthropic beta's name, as its docs write it (`computer-use-2025-01-24`).
BetaName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]{0,79}$")]


# The config keys that switch on a provider-hosted tool, and the tool each one names (as
# users write them: `enable_web_search` is `hosted.web_search`).
HOSTED_KEYS: tuple[tuple[str, HostedTool], ...] = (
    ("enable_web_search", "web_search"),
    ("enable_code_interpreter", "code_execution"),
    ("enable_code_execution", "code_execution"),
    ("enable_x_search", "x_search"),
    ("upload_files", "file_search"),  # a non-empty list switches it on
)


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
    # The `execute_command` tool (`workspace/commands.py`): `command_line:`, or the
    # predecessor's flat keys (`command_line_sandbox`, `enable_mcp_command_line`, ...).
    command_line: CommandLineConfig = CommandLineConfig()

    # The agent's workspace, `.massgen/workspaces/<run>/<cwd>/` (the predecessor's key): a
    # name, not a path; setting it gives the agent the file tools (`massgen/workspace/`).
    cwd: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    # `type: claude_code` only: `claude_code:`, or the flat keys (`permission_mode`, ...).
    claude_code: ClaudeCodeConfig = ClaudeCodeConfig()
    # `type: codex` only (`backends/codex.py`): the Codex CLI to run, where it is not
    # `codex` on PATH (or `$MASSGEN_CODEX_PATH`).
    codex_path: str | None = Field(default=None, min_length=1)
    # Provider-hosted tools: `hosted:`, or the flat `enable_web_search`, ...
    hosted: HostedConfig = HostedConfig()
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
    # start and deleted at its end (`runs/uploads.py`).
    upload_files: tuple[Upload, ...] = Field(default=(), max_length=MAX_FILES)
    # Media tools: `media:`, or the flat `enable_image_generation`, ..., `media_tools`.
    media: MediaConfig = MediaConfig()

    @model_validator(mode="before")
    @classmethod
    def _nest_flat_keys(cls, data: Any) -> Any:
        return nest_flat_keys(data)

    def hosted_keys(self) -> tuple[tuple[str, HostedTool], ...]:
        """(config key, hosted tool) for each hosted-tool key this config switches on."""
        return tuple((key, tool) for key, tool in HOSTED_KEYS if self._switched_on(key))

    def _switched_on(self, key: str) -> bool:
        if key == "upload_files":  # media entries are model input, not file search
            return any(isinstance(f, UploadFile) for f in self.upload_files)
        return bool(getattr(self.hosted, FLAT_KEYS[key][1]))

    def hosted_tools(self) -> tuple[HostedTool, ...]:
        """The hosted tools every request carries; `file_search` joins them once its files
        are uploaded (`runs/uploads.py`)."""
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
            given = [
                flat_key("claude_code", field) or field
                for field in self.claude_code.model_dump(exclude_defaults=True)
            ]
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
