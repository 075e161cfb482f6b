"""The typed configuration: what a config file may say, validated once.

Shape follows the predecessor (`agent:`/`agents:`, `orchestrator:`, `ui:`,
`timeout_settings:`) so its configs load unchanged where we support what they use.
Unknown keys are errors; nothing is forwarded to a provider unless it is declared here.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Sequence
from dataclasses import fields
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from massgen.config.custom_tools import CustomTool
from massgen.config.mcp import McpServer, normalise_servers, unique_names
from massgen.config.permissions import PermissionsConfig, permissions_block
from massgen.config.subagent_types import ROLES
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

    def generation_params(self) -> GenerationParams:
        """The fields `GenerationParams` names, as this config sets them (a field that
        `GenerationParams` gains must be declared above, with its bounds)."""
        values = {f.name: getattr(self, f.name) for f in fields(GenerationParams)}
        values["stop"] = tuple(self.stop) if self.stop else None
        return GenerationParams(**values)


class AgentConfig(Strict):
    id: str = Field(min_length=1)
    backend: BackendConfig
    system_message: str | None = None
    voting_sensitivity: VotingSensitivity | None = None


class SubagentAgentConfig(Strict):
    """An agent of the team each subagent runs as (`subagent_orchestrator.agents[]`); its
    workspace is set per child, and `id` defaults to `subagent_<n>`."""

    id: str | None = Field(default=None, min_length=1)
    backend: BackendConfig
    system_message: str | None = None


class SubagentOrchestratorConfig(Strict):
    """`coordination.subagent_orchestrator`: with `enabled` and `agents`, a child is a team
    of these agents; otherwise it is one agent on the spawning agent's own backend."""

    enabled: bool = False
    agents: tuple[SubagentAgentConfig, ...] = Field(default=(), max_length=10)
    # Overrides the children's `enable_web_search` (None: as their backend says).
    enable_web_search: bool | None = None
    # A child team's answers per agent (the predecessor's default, 3).
    max_new_answers: int = Field(default=3, ge=1, le=10)
    final_answer_strategy: FinalStrategy | None = None


class BackgroundSubagentsConfig(Strict):
    """`coordination.background_subagents` (the predecessor's key): `spawn_subagents(...,
    background=true)` starts the children and returns at once; `list_subagents`,
    `wait_subagents` and `cancel_subagent` reach them, and a note tells the agent when one
    finishes (`tools/subagent_jobs.py`). Both `injection_strategy` values deliver that
    note the same way: a message read before the agent's next model call."""

    enabled: bool = True
    injection_strategy: Literal["tool_result", "user_message"] = "tool_result"
    # Background children alive at once: per agent, and over the whole run.
    max_per_agent: int = Field(default=4, ge=1, le=16)
    max_per_run: int = Field(default=8, ge=1, le=64)


class PersonaGeneratorConfig(Strict):
    """`orchestrator.coordination.persona_generator` (`coordination/personas.py`): before
    coordination, one call to the first agent's model gives every agent a persona of its
    own, shown in its system prompt until its first answer; then it is dropped, softened
    to a preference, or kept."""

    enabled: bool = False
    # What the personas differ in: values and priorities, the kind of solution, or how
    # the work is approached (the predecessor's three modes).
    diversity_mode: Literal["perspective", "implementation", "methodology"] = "perspective"
    after_first_answer: Literal["drop", "soften", "keep"] = "drop"
    persona_guidelines: str | None = None
    # The generation call's bounds; past either it fails, with a warning, and the run
    # goes on without personas.
    timeout_seconds: float = Field(default=120, gt=0, le=1800)
    max_chars: int = Field(default=20_000, ge=1000, le=200_000)


class CriteriaGeneratorConfig(Strict):
    """`orchestrator.coordination.evaluation_criteria_generator` (`coordination/criteria.py`):
    before coordination, one call to the first agent's model writes task-specific
    criteria that every agent is shown as what a good answer must satisfy."""

    enabled: bool = False
    min_criteria: int = Field(default=4, ge=1, le=20)
    max_criteria: int = Field(default=7, ge=1, le=20)
    timeout_seconds: float = Field(default=120, gt=0, le=1800)
    max_chars: int = Field(default=30_000, ge=1000, le=200_000)

    @model_validator(mode="after")
    def _range(self) -> CriteriaGeneratorConfig:
        if self.min_criteria > self.max_criteria:
            raise ValueError(
                f"min_criteria ({self.min_criteria}) is above max_criteria "
                f"({self.max_criteria}); lower min_criteria or raise max_criteria"
            )
        return self


class QuestionParaphraserConfig(Strict):
    """`orchestrator.coordination.question_paraphraser` (`coordination/paraphrases.py`; the
    predecessor's `orchestrator.dspy`): before coordination, one call to the first agent's
    model rephrases the question `variants` times; agent i reads rephrasing i % N after
    the original. The presenter, the log and the answer keep the original."""

    enabled: bool = False
    # No more are asked for than there are agents.
    variants: int = Field(default=3, ge=1, le=10)
    # The predecessor's strategies: how far a rephrasing may move from the original's words.
    strategy: Literal["balanced", "diverse", "conservative", "adaptive"] = "balanced"
    # The generation call's bounds; past either it fails, with a warning, and every agent
    # reads the original only.
    timeout_seconds: float = Field(default=120, gt=0, le=1800)
    max_chars: int = Field(default=20_000, ge=1000, le=200_000)


class CoordinationConfig(Strict):
    """`orchestrator.coordination`: the predecessor's block; planning mode, task planning,
    filesystem memory, skills, personas, evaluation criteria, the changedoc and questions
    between agents (broadcast) are what we take."""

    # While agents coordinate, tools not marked read-only are described, not run; the
    # winner runs them in the final presentation.
    enable_planning_mode: bool = False
    # Replaces the planning-mode paragraph of the system prompt (predecessor's key).
    planning_mode_instruction: str | None = None
    # Task-planning tools for every agent (`tools/planning.py`); the plan also written to
    # `tasks/plan.json` in the agent's workspace with `task_planning_filesystem_mode`.
    enable_agent_task_planning: bool = False
    task_planning_filesystem_mode: bool = False
    max_tasks_per_plan: int = Field(default=10, ge=1, le=100)
    # Skills (`tools/skills.py`): SKILL.md folders listed in the system prompt, loaded with
    # `load_skill`; from `skills_directory` (relative to where massgen runs),
    # `~/.agent/skills` and the bundled ones (`massgen_skills` names some; empty: all).
    # `load_previous_session_skills` adds the evolving skills earlier runs left in their
    # final workspaces (`tasks/evolving_skill/SKILL.md`).
    use_skills: bool = False
    skills_directory: str = Field(default=".agent/skills", min_length=1)
    massgen_skills: tuple[str, ...] = ()
    load_previous_session_skills: bool = False
    # Memories as files in each agent's workspace (`workspace/memory.py`): the short-term
    # ones shown in every agent's system prompt, newest first, at most `memory_max_short_term`
    # of them and `memory_max_chars` characters in all; the long-term ones listed (at most
    # `memory_max_long_term`) and read with `read_file`. A chat's next turn starts from the
    # final workspace's memories. Needs agents with a workspace (`backend.cwd`).
    enable_memory_filesystem_mode: bool = False
    memory_max_short_term: int = Field(default=10, ge=1, le=100)
    memory_max_chars: int = Field(default=8000, ge=500, le=200_000)
    memory_max_long_term: int = Field(default=20, ge=0, le=200)
    # Subagents (`tools/subagents.py`, `subagent_runs.py`): the `spawn_subagents` tool,
    # which runs tasks as child teams, each in a directory of the agent's workspace.
    enable_subagents: bool = False
    # Each call's children must finish within this many seconds (their deadline; the
    # tool's own bound replaces `tool_timeout_seconds` for this one tool).
    subagent_default_timeout: float = Field(default=300, gt=0, le=3600)
    # Children of one agent running at once; a call may name up to MAX_TASKS tasks.
    subagent_max_concurrent: int = Field(default=3, ge=1, le=16)
    subagent_orchestrator: SubagentOrchestratorConfig = SubagentOrchestratorConfig()
    background_subagents: BackgroundSubagentsConfig = BackgroundSubagentsConfig()
    # The roles (`subagent_type`) agents may give a child; None: the predecessor's default
    # set (`tools/subagents.py: DEFAULT_TYPES`).
    subagent_types: tuple[str, ...] | None = None

    @field_validator("subagent_types")
    @classmethod
    def _known_types(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        unknown = [name for name in value or () if name.lower() not in ROLES]
        if unknown:
            raise ValueError(
                f"unknown subagent type(s) {', '.join(unknown)}; known: {', '.join(ROLES)}"
            )
        return tuple(name.lower() for name in value) if value is not None else None

    # After the final presentation the winner checks the answer and may restart the whole
    # coordination with feedback (`coordination/restarts.py`); this many restarts at most.
    max_orchestration_restarts: int = Field(default=0, ge=0, le=10)
    # Generated before coordination (`coordination/aids.py`); a failed generation is a
    # warning and the run goes on without.
    persona_generator: PersonaGeneratorConfig = PersonaGeneratorConfig()
    evaluation_criteria_generator: CriteriaGeneratorConfig = CriteriaGeneratorConfig()
    question_paraphraser: QuestionParaphraserConfig = QuestionParaphraserConfig()
    # A decision log, `tasks/changedoc.md`, kept by each agent with a workspace and part
    # of its answers' snapshots (`coordination/changedoc.py`). Off by default (the
    # predecessor had it on).
    enable_changedoc: bool = False
    # Questions between agents (`ask_others`, `coordination/broadcast.py`), the predecessor's
    # keys: `agents` sends a question to the other agents, each answering it in a short call
    # of its own; `human` asks the person at the terminal (without one the tool says so at
    # once); false: off. A question waits at most `broadcast_timeout` seconds (partial answers
    # come back), each agent asks at most `max_broadcasts_per_agent` per turn.
    broadcast: Literal["agents", "human", False] = False
    broadcast_timeout: float = Field(default=300, gt=0, le=3600)
    max_broadcasts_per_agent: int = Field(default=10, ge=1, le=100)
    # How often agents are told to ask (`low`: when blocked; `high`: whenever weighing options).
    broadcast_sensitivity: Literal["low", "medium", "high"] = "medium"
    # `ask_others` waits for the answers unless the call says `wait: false`; without waiting
    # they reach the asker with its next model call.
    broadcast_wait_by_default: bool = True
    # How elaborate the solutions answering agents suggest (the predecessor's shadow agents).
    response_depth: Literal["low", "medium", "high"] = "medium"

    @field_validator("broadcast", mode="before")
    @classmethod
    def _broadcast_off(cls, value: Any) -> Any:
        return False if value is None else value


class ContextPathConfig(Strict):
    """`orchestrator.context_paths[]`: a directory or file of the user's that every agent
    may read. Only the final presenter may write, only under `permission: write`, and never
    under `protected_paths` (relative to `path`, or absolute). A relative `path` is taken
    from the directory massgen runs in; it must exist (checked at load)."""

    path: str = Field(min_length=1)
    permission: Literal["read", "write"] = "read"
    protected_paths: tuple[str, ...] = ()


class OrchestratorConfig(Strict):
    max_new_answers_per_agent: int = Field(default=3, ge=1)
    # None: twice the team size, at least 10.
    max_new_answers_global: int | None = Field(default=None, ge=1)
    # Model calls in one agent run that only used tools (not vote/new_answer).
    max_tool_iterations: int = Field(default=10, ge=1)
    # One tool call's wall-clock limit; a call past it is cancelled and the model told.
    tool_timeout_seconds: float = Field(default=60, gt=0)
    # A tool result longer than this (UTF-8 bytes) is cut, and the model told its size.
    max_tool_result_bytes: int = Field(default=64 * 1024, ge=256)
    # Tool calls of one model turn run concurrently, at most this many at once (the
    # predecessor's name; it sat on each backend there).
    max_concurrent_tools: int = Field(default=10, ge=1)
    # A spending limit for the run (`coordination/budget.py`): no call starts that would
    # pass it; the run ends with its best answer so far, status `budget`.
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0)  # US dollars, priced calls only
    # Runaway guards (`coordination/runaway.py`): one corrective message, then the agent
    # fails for the turn.
    max_reply_chars: int = Field(default=60_000, ge=1000)  # written without an action
    max_identical_tool_calls: int = Field(default=3, ge=2)  # same tool, same arguments
    max_repeated_lines: int = Field(default=10, ge=3)  # one line looped in a reply
    coordination: CoordinationConfig = CoordinationConfig()
    max_invalid_action_retries: int = Field(default=3, ge=0)
    answer_novelty_requirement: Novelty = "lenient"
    voting_sensitivity: VotingSensitivity = "lenient"
    final_answer_strategy: FinalStrategy = "winner_present"
    skip_final_presentation: bool = False
    # Debugging the final presentation (the predecessor's key): no coordination rounds; the
    # first agent answers at once as the final presenter (`coordination/direct.py`).
    skip_coordination_rounds: bool = False
    # How a vote for one's own answer counts: "tiebreak" (only to break ties between peer
    # votes; self-preference is a known judge bias), "count" (like any vote), "exclude".
    self_votes: Literal["tiebreak", "count", "exclude"] = "tiebreak"
    # Seed for the anonymous label assignment and answer shuffling; recorded in the logs.
    seed: int | None = None
    # The user's directories the agents may read (and the final presenter may write).
    context_paths: tuple[ContextPathConfig, ...] = ()
    # Media tools for every agent, and who serves each generation mode (`tools/media_plan.py`).
    enable_multimodal_tools: bool = False
    image_generation_backend: str | None = None
    image_generation_model: str | None = None
    audio_generation_backend: str | None = None
    audio_generation_model: str | None = None
    video_generation_backend: str | None = None
    video_generation_model: str | None = None
    # A generated file, or a file sent to be understood, is refused past this (bytes).
    max_media_bytes: int = Field(default=25 * 1024 * 1024, ge=1024)
    # Debugging restarts: the answer evaluated on attempt 1 instead of the real one (the
    # predecessor's key; with `coordination.max_orchestration_restarts` > 0 only).
    debug_final_answer: str | None = None

    def answer_limit(self, team_size: int) -> int:
        if self.max_new_answers_global is not None:
            return self.max_new_answers_global
        return max(10, 2 * team_size)


class TimeoutSettings(Strict):
    orchestrator_timeout_seconds: float = Field(default=1800, gt=0)


class UIConfig(Strict):
    display_type: Literal[
        "rich_terminal", "textual_terminal", "terminal", "simple", "silent", "plain"
    ] = "rich_terminal"
    logging_enabled: bool = True
    automation_mode: bool = False
    debug: bool = False


class MassgenConfig(Strict):
    agents: list[AgentConfig] = Field(min_length=1)
    orchestrator: OrchestratorConfig = OrchestratorConfig()
    ui: UIConfig = UIConfig()
    timeout_settings: TimeoutSettings = TimeoutSettings()
    # The permission engine (`config/permissions.py`); on when absent.
    permissions: PermissionsConfig | None = None

    @field_validator("permissions", mode="before")
    @classmethod
    def _permissions_block(cls, value: Any) -> Any:
        return permissions_block(value)

    @model_validator(mode="before")
    @classmethod
    def _one_agent_or_many(cls, data: Any) -> Any:
        if isinstance(data, dict) and "agent" in data:
            data = dict(data)
            if "agents" in data:
                raise ValueError("use either `agent:` or `agents:`, not both")
            data["agents"] = [data.pop("agent")]
        return data

    @model_validator(mode="after")
    def _unique_ids(self) -> MassgenConfig:
        seen: set[str] = set()
        for agent in self.agents:
            if agent.id in seen:
                raise ValueError(f"agent id {agent.id!r} is used twice; ids must be unique")
            seen.add(agent.id)
        names = list(workspace_names(self.agents).values())
        if len(set(names)) != len(names):
            raise ValueError(
                "two agents' workspaces land in the same directory (a shared `cwd` is "
                "suffixed with each agent's id); rename one `cwd`"
            )
        return self

    @model_validator(mode="after")
    def _memory_has_a_workspace(self) -> MassgenConfig:
        coordination = self.orchestrator.coordination
        if coordination.enable_memory_filesystem_mode and not any(
            agent.backend.cwd for agent in self.agents
        ):
            raise ValueError(
                "orchestrator.coordination.enable_memory_filesystem_mode keeps memories as "
                "files in the agents' workspaces, and no agent has one; give them "
                "`backend.cwd`, or remove the key"
            )
        return self

    @model_validator(mode="after")
    def _someone_to_ask(self) -> MassgenConfig:
        if self.orchestrator.coordination.broadcast == "agents" and len(self.agents) < 2:
            raise ValueError(
                "orchestrator.coordination.broadcast: agents lets agents ask each other, and "
                "this team has one agent; add agents, use `human`, or remove the key"
            )
        return self

    @model_validator(mode="after")
    def _command_timeouts_fit(self) -> MassgenConfig:
        limit = self.orchestrator.tool_timeout_seconds
        for index, agent in enumerate(self.agents):
            wanted = agent.backend.command_line_timeout_seconds
            if wanted is not None and wanted > limit:
                raise ValueError(
                    f"agents[{index}].backend.command_line_timeout_seconds ({wanted:g}) is "
                    f"above orchestrator.tool_timeout_seconds ({limit:g}), which bounds every "
                    "tool call; lower it, or raise tool_timeout_seconds"
                )
        return self


def workspace_names(agents: Sequence[AgentConfig]) -> dict[str, str]:
    """Agent id -> the directory name of its workspace: its `cwd`, or, where several agents
    name the same `cwd` (as the predecessor's examples do), `<cwd>_<agent id>` for each of
    them, so that no two agents ever write in one directory."""
    named = [agent for agent in agents if agent.backend.cwd]
    counts = collections.Counter(agent.backend.cwd for agent in named)
    return {
        agent.id: (
            str(agent.backend.cwd)
            if counts[agent.backend.cwd] == 1
            else f"{agent.backend.cwd}_{_dir_safe(agent.id)}"
        )
        for agent in named
    }


def _dir_safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", text)[:64]


def _keys(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Keys the predecessor's configs use that we do not honour yet. A config that sets one is
# refused with "not supported yet" (not a did-you-mean) and is never silently ignored.
# Keyed by the model whose level the key would sit at.
NOT_YET_SUPPORTED: dict[type[BaseModel], frozenset[str]] = {
    MassgenConfig: _keys("memory hooks checkpoint filesystem consumption_settings"),
    AgentConfig: _keys("subtask main_agent subagent_agents memory hooks filesystem"),
    BackendConfig: _keys(
        # tools and workspaces
        "hooks"
        " disallowed_tools exclude_file_operation_mcps"
        " enable_code_based_tools shared_tools_directory use_mcpwrapped_for_tool_filtering"
        " use_no_roots_wrapper concurrent_tool_execution max_concurrent_tools"
        # provider built-in tools
        " enable_programmatic_flow enable_tool_search output_schema"
        # command-line execution in a container
        " command_line_docker_image"
        " command_line_docker_memory_limit command_line_docker_cpu_limit"
        " command_line_docker_network_mode command_line_docker_enable_sudo"
        " command_line_docker_credentials command_line_docker_packages"
        " enable_file_generation"
        # claude_code specifics, and the OpenAI Responses `text` block
        " permission_mode system_prompt append_system_prompt text"
    ),
    OrchestratorConfig: _keys(
        "snapshot_storage agent_temporary_workspace dspy"
        " voting_threshold skip_voting"
        " disable_injection defer_voting_until_all_answered coordination_mode presenter_agent"
        " fairness_enabled fairness_lead_cap_answers max_midstream_injections_per_round"
        " defer_peer_updates_until_restart checklist_require_gap_report gap_report_mode"
        " max_checklist_calls_per_round checklist_first_answer"
        " allow_midstream_peer_updates_before_checklist_submit enable_nlip nlip_config"
        " docker max_turns interactive_mode"
    ),
    CoordinationConfig: _keys(
        "enable_post_presentation_evaluation write_mode drift_conflict_policy"
        " prompt_improver novelty_injection criteria_mode fast_iteration_mode"
        " learning_capture_mode plan_depth"
    ),
    TimeoutSettings: _keys(
        "initial_round_timeout_seconds subsequent_round_timeout_seconds"
        " round_timeout_grace_seconds agent_timeout_seconds"
    ),
}
