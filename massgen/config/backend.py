"""An agent's `backend:` block (`BackendConfig`). Its nested groups, and the flat keys
they still accept, are `config/backend_groups.py`."""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

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


class BackendConfig(Strict):
    type: str
    model: str | None = None
    api_key: str | None = None
    base_url: str | None = None
    api_version: str | None = None
    # Typed generation parameters (`core.types.GenerationParams`); nothing else reaches the
    # provider except `extra_body`.
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    stop: list[str] | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    reasoning_effort: Literal["minimal", "low", "medium", "high", "xhigh"] | None = None
    # OpenAI Responses: stream a summary of the model's reasoning.
    reasoning_summary: Literal["auto", "concise", "detailed"] | None = None
    # Anthropic: extended thinking with this many tokens (added to max_tokens).
    thinking_budget: int | None = Field(default=None, ge=1024)
    # OpenAI Responses `text.verbosity` (the predecessor's `text: {verbosity: ...}`).
    verbosity: Literal["low", "medium", "high"] | None = None
    extra_body: dict[str, Any] | None = None
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
    # start and deleted at its end (`massgen/uploads.py`).
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
            given = [
                flat_key("claude_code", field) or field
                for field in self.claude_code.model_dump(exclude_defaults=True)
            ]
            if given:
                raise ValueError(
                    f"`{'`, `'.join(given)}` configure Claude Code, and this backend is "
                    f"`type: {self.type}`; remove them, or use type: claude_code"
                )
        return self

    def generation_params(self) -> GenerationParams:
        """The fields `GenerationParams` names, as this config sets them (a field that
        `GenerationParams` gains must be declared above, with its bounds)."""
        values = {f.name: getattr(self, f.name) for f in fields(GenerationParams)}
        values["stop"] = tuple(self.stop) if self.stop else None
        return GenerationParams(**values)
