"""`orchestrator.coordination`: the predecessor's block (`CoordinationConfig`), with its
subagent team, background subagents and the generators that run before coordination."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from massgen.config.backend import BackendConfig, FinalStrategy
from massgen.config.strict import Strict
from massgen.config.subagent_types import ROLES


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
    finishes (`runs/subagents/jobs.py`). Both `injection_strategy` values deliver that
    note the same way: a message read before the agent's next model call."""

    enabled: bool = True
    injection_strategy: Literal["tool_result", "user_message"] = "tool_result"
    # Background children alive at once: per agent, and over the whole run.
    max_per_agent: int = Field(default=4, ge=1, le=16)
    max_per_run: int = Field(default=8, ge=1, le=64)


class PersonaGeneratorConfig(Strict):
    """`orchestrator.coordination.persona_generator` (`coordination/aids/personas.py`):
    before coordination, one call to the first agent's model gives every agent a persona
    of its own, shown in its system prompt until its first answer; then it is dropped,
    softened to a preference, or kept."""

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
    """`orchestrator.coordination.evaluation_criteria_generator`
    (`coordination/aids/criteria.py`): before coordination, one call to the first agent's
    model writes task-specific criteria that every agent is shown as what a good answer
    must satisfy."""

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
    """`orchestrator.coordination.question_paraphraser` (`coordination/aids/paraphrases.py`;
    the predecessor's `orchestrator.dspy`): before coordination, one call to the first
    agent's model rephrases the question `variants` times; agent i reads rephrasing i % N
    after the original. The presenter, the log and the answer keep the original."""

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
    # Subagents (`runs/subagents/`): the `spawn_subagents` tool,
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
    # set (`config/subagent_types.py: DEFAULT_TYPES`).
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
    # Generated before coordination (`coordination/aids/`); a failed generation is a
    # warning and the run goes on without.
    persona_generator: PersonaGeneratorConfig = PersonaGeneratorConfig()
    evaluation_criteria_generator: CriteriaGeneratorConfig = CriteriaGeneratorConfig()
    question_paraphraser: QuestionParaphraserConfig = QuestionParaphraserConfig()
    # A decision log, `tasks/changedoc.md`, kept by each agent with a workspace and part
    # of its answers' snapshots (`coordination/aids/changedoc.py`). Off by default (the
    # predecessor had it on).
    enable_changedoc: bool = False
    # Questions between agents (`ask_others`, `coordination/aids/broadcast.py`), the
    # predecessor's keys: `agents` sends a question to the other agents, each answering it
    # in a short call of its own; `human` asks the person at the terminal (without one the
    # tool says so at once); false: off. A question waits at most `broadcast_timeout`
    # seconds (partial answers come back), each agent asks at most
    # `max_broadcasts_per_agent` per turn.
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
