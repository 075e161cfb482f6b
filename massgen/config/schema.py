"""The typed configuration: what a config file may say, validated once.

Shape follows the predecessor (`agent:`/`agents:`, `orchestrator:`, `ui:`,
`timeout_settings:`) so its configs load unchanged where we support what they use.
Unknown keys are errors; nothing is forwarded to a provider unless it is declared here.
An agent's `backend:` block is `config/backend.py`, `orchestrator.coordination` is
`config/coordination.py`; both are importable from here, where the whole file is put together.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from massgen.config.backend import BackendConfig, FinalStrategy, Novelty, VotingSensitivity
from massgen.config.backend_groups import CommandLineConfig
from massgen.config.coordination import CoordinationConfig
from massgen.config.permissions import PermissionsConfig, permissions_block
from massgen.config.strict import Strict
from massgen.config.verifier import VerifierConfig

# The backend types that run a whole agent (a vendor's CLI) in a workspace of its own.
AGENT_HOSTS = ("claude_code", "codex", "gemini_cli")


class AgentConfig(Strict):
    id: str = Field(min_length=1)
    backend: BackendConfig
    system_message: str | None = None
    voting_sensitivity: VotingSensitivity | None = None

    @model_validator(mode="before")
    @classmethod
    def _claude_code_workspace(cls, data: Any) -> Any:
        """Claude Code, Codex and Gemini CLI work in the agent's own workspace: without a `cwd`,
        one named after the agent (`<id>_workspace`), as the predecessor gave its coding
        agents."""
        backend = data.get("backend") if isinstance(data, dict) else None
        if isinstance(backend, BackendConfig):
            backend = backend.model_dump(exclude_unset=True)
        if not isinstance(backend, dict) or backend.get("type") not in AGENT_HOSTS:
            return data
        if backend.get("cwd"):
            return data
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(data.get("id") or "")).lstrip("._-")[:50]
        return {**data, "backend": {**backend, "cwd": f"{name or 'agent'}_workspace"}}


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
    # When the agents' independent first answers all agree under this equivalence, the
    # run ends with that answer: no vote and no presentation (`coordination/agreement.py`).
    # "exact" (normalised text) by default: identical answers leave nothing to debate, and
    # numbers or option letters are only the answer for tasks known to want them (`massgen
    # batch` sets it from its scorer).
    agreement: Literal["exact", "numeric", "choice", "none"] = "exact"
    # "all": every live agent's first answer must agree. "majority": more than half of
    # them agreeing ends the run at once, as counting independent answers would (the
    # others cannot outvote them); with no majority the team votes as usual.
    agreement_quorum: Literal["all", "majority"] = "all"
    # What settles first answers that reach no agreement: "vote" (the team reads them and
    # votes), or "rank" (no vote: by their checks, then how many say the same, then the
    # members' order in the config; `coordination/ranking.py`). "rank" is for teams
    # whose votes do not read the answers, measured so for small local models.
    when_split: Literal["vote", "rank"] = "vote"
    # "together": every member writes its first answer at once. "as_needed": with the
    # majority quorum, only the first members in config order that could make a majority
    # answer first; the others are asked only when those do not agree (adaptive
    # consistency: an agreeing majority needs no more samples). With a `verifier:`, no
    # equivalence (code) and `when_split: rank`: one member at a time in config order,
    # until an answer passes its check (no later answer could rank above it). Fewer calls,
    # more time.
    first_answers: Literal["together", "as_needed"] = "together"
    # A model without native tool calling (JSON actions) writes its turn as free text and
    # ends it with a short decision line, instead of writing its answer inside a JSON
    # string (`coordination/free_text.py`); false: the JSON action, as before.
    free_text_actions: bool = True
    # Program-of-thought for those free-text models: their ```python blocks run once per
    # reply in the command sandbox (no network, an empty folder, 10 s) and they read the
    # real output instead of imagining it (`coordination/python_blocks.py`). `massgen
    # batch` gives its single-call baselines the same.
    run_python_blocks: bool = False
    # The user's directories the agents may read (and the final presenter may write).
    context_paths: tuple[ContextPathConfig, ...] = ()
    # Media tools for every agent, and who serves each generation mode (`tools/media/plan.py`).
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
    # How every candidate answer is checked as it is published (`config/verifier.py`).
    verifier: VerifierConfig | None = None

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
            wanted = agent.backend.command_line.timeout_seconds
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


# Command-line execution in a container: `command_line.<key>`, or flat `command_line_<key>`.
_CONTAINER = _keys(
    "docker_image docker_memory_limit docker_cpu_limit docker_network_mode"
    " docker_enable_sudo docker_credentials docker_packages"
)

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
        " enable_file_generation"
        # the OpenAI Responses `text` block
        " text"
    )
    | {f"command_line_{key}" for key in _CONTAINER},
    CommandLineConfig: _CONTAINER,
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
