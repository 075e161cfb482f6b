"""The predecessor's config keys that our schema does not declare, as data: for each,
whether massgen accepts it with no effect (and why) or refuses it (why, and what to use
instead, `rules.py`). `walk.py` and `backend.py` apply these tables to a parsed file."""

from __future__ import annotations

from massgen.config.predecessor.rules import Disposition, NoEffect, Refused

_OWN_STORE = NoEffect(
    "every run keeps its workspaces and answer snapshots in its own store under .massgen/"
)
_NO_FS_MCP = NoEffect("the file tools are built in (no filesystem MCP server to exclude)")
_AS_FUNCTIONS = NoEffect("tools are offered to the model as function calls")
_NO_BUILTINS = NoEffect(
    "massgen ships no library of custom tools; list your own under `custom_tools`"
)
_OUR_ENGINE = NoEffect("massgen's permission engine decides every tool call")
_OUR_ROUNDS = NoEffect(
    "coordination here restarts an agent when a peer publishes; there are no "
    "mid-stream injections, fairness caps or checklists to tune"
)
_ROUND_TIMEOUTS = NoEffect(
    "there are no per-round deadlines; `orchestrator_timeout_seconds` bounds the run"
)
_IGNORED_THERE = NoEffect(
    "not a key of the predecessor either: it warned about it and ran without it"
)
_TUNING = NoEffect("a tuning knob of a predecessor mechanism massgen does not have")
_INJECTION_TEST = NoEffect(
    "a delay the predecessor's tests used to exercise mid-stream injection, which massgen "
    "does not have (a peer's answer restarts an agent instead)"
)
# Docker (and `srt`) execution: commands here always run in massgen's OS sandbox, which
# keeps what a container was for (writes only in the workspace, no network unless asked,
# secrets hidden). What only a container has is dropped with a note saying so.
SANDBOXED = NoEffect(
    "they run on this machine in bubblewrap or Landlock (`command_line_sandbox: auto`), "
    "not in a container, writing only in the agent's workspace, with no network unless "
    "`command_line_network: true`"
)
_NO_IMAGE = NoEffect(
    "there is no container image: commands use the programs installed on this machine; "
    "install beforehand what the image provided"
)
_NO_ROOT = NoEffect("commands cannot become root in the sandbox; install packages beforehand")
_NO_CREDENTIALS = NoEffect(
    "secrets are never passed to commands; name a variable a command truly needs in "
    "`command_line_env`"
)
_NO_LIMITS = NoEffect(
    "the sandbox bounds a command by its timeout (`command_line_timeout_seconds`), output "
    "size, processes (`command_line_max_processes`) and memory per process "
    "(`command_line_max_memory_mb`), not by CPU quotas"
)
_MEMORY = Refused(
    "the `memory` block (mem0 conversation and persistent memory over a Qdrant vector "
    "store, with LLM fact extraction and context compression) is not part of this version",
    "Remove the block; a chat keeps its history (`massgen` interactive mode, --continue), "
    "and `orchestrator.coordination.enable_memory_filesystem_mode: true` gives the agents "
    "memories as files in their workspaces that carry across a chat's turns",
)
# NLIP was the predecessor's message envelope between its orchestrator, agents and tools
# (sessions, message tracking, token bookkeeping): a transport, not a behaviour.
_NLIP = NoEffect(
    "agents and tools exchange answers and calls through massgen's own orchestrator and "
    "event log; there is no NLIP envelope, and the team does the same without it"
)
_ALL_TOOLS_OFFERED = NoEffect(
    "every tool is offered to the model from the start, so there is nothing to search for"
)

BACKEND: dict[str, Disposition] = {
    "exclude_file_operation_mcps": _NO_FS_MCP,
    "enable_code_based_tools": _AS_FUNCTIONS,
    "shared_tools_directory": _AS_FUNCTIONS,
    "direct_mcp_servers": NoEffect(
        "every MCP server's tools are offered to the model directly, as function calls"
    ),
    "auto_discover_custom_tools": _NO_BUILTINS,
    "exclude_custom_tools": _NO_BUILTINS,
    "permission_mode": _OUR_ENGINE,
    "concurrent_tool_execution": NoEffect(
        "a turn's tool calls always run concurrently (`orchestrator.max_concurrent_tools`)"
    ),
    "max_concurrent_tools": NoEffect("the bound is `orchestrator.max_concurrent_tools`"),
    "parallel_tool_calls": NoEffect("models may always make several tool calls in a turn"),
    "websocket_mode": NoEffect("requests go over HTTP streaming"),
    "command_line_docker_image": _NO_IMAGE,
    "command_line_docker_packages": _NO_IMAGE,
    "command_line_docker_memory_limit": _NO_LIMITS,
    "command_line_docker_cpu_limit": _NO_LIMITS,
    "command_line_docker_enable_sudo": _NO_ROOT,
    "command_line_docker_credentials": _NO_CREDENTIALS,
    "enable_file_generation": NoEffect(
        "an agent with a workspace (`cwd`) writes files with the file tools, in every phase"
    ),
    "enable_programmatic_flow": NoEffect(
        "the model calls each tool directly (Anthropic's programmatic tool calling, where "
        "code run by the provider calls them, is not used)"
    ),
    "enable_tool_search": _ALL_TOOLS_OFFERED,
    "tool_search_variant": _ALL_TOOLS_OFFERED,
    "debug_delay_seconds": _INJECTION_TEST,
    "debug_delay_after_n_tools": _INJECTION_TEST,
    # Outside an `ag2` backend (`ag2.py` reads them inside one).
    "agent_config": Refused("only an `ag2` backend has an AG2 agent", "Remove the key"),
    "group_config": Refused("only an `ag2` backend has an AG2 group chat", "Remove the key"),
}
# Inference-server parameters with no typed field: sent as they are, in `extra_body`.
TO_EXTRA_BODY = ("top_k", "repetition_penalty", "chat_template_kwargs", "min_p")

ORCHESTRATOR: dict[str, Disposition] = {
    "snapshot_storage": _OWN_STORE,
    "agent_temporary_workspace": _OWN_STORE,
    "fairness_enabled": _OUR_ROUNDS,
    "fairness_lead_cap_answers": _OUR_ROUNDS,
    "max_midstream_injections_per_round": _OUR_ROUNDS,
    "defer_peer_updates_until_restart": _OUR_ROUNDS,
    "allow_midstream_peer_updates_before_checklist_submit": _OUR_ROUNDS,
    "disable_injection": _OUR_ROUNDS,
    "defer_voting_until_all_answered": NoEffect(
        "agents already wait for every peer's first answer before they vote"
    ),
    "voting_threshold": NoEffect(
        "votes here are endorsements of an answer; there is no score threshold "
        "(`voting_sensitivity`: lenient, balanced or strict)"
    ),
    "enable_nlip": _NLIP,
    "nlip": _NLIP,
    "type": _IGNORED_THERE,
    "max_turns": _IGNORED_THERE,
}

_RESTARTS = NoEffect(
    "the winner evaluates the final answer whenever "
    "`orchestrator.coordination.max_orchestration_restarts` is above 0"
)

_FIXED_CRITERIA = NoEffect(
    "generated criteria stay as they are for the whole run; the predecessor evolved them "
    "from the checklist scores of its gated voting, which massgen does not have"
)
_ONE_CALL = NoEffect(
    "personas and criteria come from one call to the first agent's model, not from a "
    "team run that votes"
)
_BOOTSTRAP_CAPS = NoEffect(
    "caps on the criteria the predecessor's agents proposed; generated criteria are bounded "
    "by `evaluation_criteria_generator.max_criteria`"
)
_EACH_TURN = NoEffect("they are generated afresh for each turn of a chat")

# Inside `persona_generator:` and `evaluation_criteria_generator:`.
GENERATOR: dict[str, Disposition] = {
    "persist_across_turns": _EACH_TURN,
    "strategy": NoEffect("the predecessor's older key; `diversity_mode` says what differs"),
    "backend": Refused(
        "the generation call uses the first agent's model",
        "Remove the key; list first the agent whose model should generate",
    ),
}

COORDINATION: dict[str, Disposition] = {
    "write_mode": NoEffect(
        "each agent writes in its own workspace; only the final presenter writes to context paths"
    ),
    "fast_iteration_mode": _TUNING,
    "learning_capture_mode": _TUNING,
    "skip_redundant_scaffolding": _TUNING,
    "max_verifications_per_round": _TUNING,
    "max_internal_fix_loops": _TUNING,
    "compression_target_ratio": _TUNING,
    "enable_post_presentation_evaluation": _RESTARTS,
    # Criteria evolved from the checklist scores of the predecessor's gated voting.
    "evolving_criteria": _FIXED_CRITERIA,
    "evolving_criteria_score_threshold": _FIXED_CRITERIA,
    "evolving_criteria_max_evolutions": _FIXED_CRITERIA,
    "evolving_criteria_min_high_score_count": _FIXED_CRITERIA,
    "evolving_criteria_timeout": _FIXED_CRITERIA,
    "pre_collab_voting_threshold": _ONE_CALL,
    "bootstrap_max_per_agent_per_round": _BOOTSTRAP_CAPS,
    "bootstrap_max_total": _BOOTSTRAP_CAPS,
}

# `criteria_mode` values that asked for criteria the team writes itself: read as generated
# criteria (`evaluation_criteria_generator`), with this note.
BOOTSTRAP_CRITERIA = frozenset({"bootstrap_inline", "bootstrap_subagent"})
BOOTSTRAPPED = (
    "criteria are written for the task by one call to the first agent's model before "
    "coordination (`evaluation_criteria_generator`); the predecessor's agents proposed "
    "them while they worked"
)

TIMEOUTS: dict[str, Disposition] = {
    "initial_round_timeout_seconds": _ROUND_TIMEOUTS,
    "subsequent_round_timeout_seconds": _ROUND_TIMEOUTS,
    "round_timeout_grace_seconds": _ROUND_TIMEOUTS,
}

MCP_SERVER: dict[str, Disposition] = {
    "security": NoEffect(
        "servers start with a scrubbed environment and the permission engine decides every call"
    ),
    "defer_loading": _ALL_TOOLS_OFFERED,
}

CUSTOM_TOOL: dict[str, Disposition] = {"defer_loading": _ALL_TOOLS_OFFERED}

# `memory:` at the top is read as filesystem memory (`memory.py`).
TOP: dict[str, Disposition] = {
    # One example puts its task here; the predecessor never read the key (the question
    # came from the command line, as the example's own comment runs it).
    "task": NoEffect("the question is given on the command line (or typed in a chat)"),
    "nlip": _NLIP,
}

AGENT: dict[str, Disposition] = {
    "memory": _MEMORY,
    "nlip": _NLIP,
    "enable_nlip": _NLIP,
}


# The predecessor's later `voting_sensitivity` values, each as the nearest of ours: how
# high the bar is for voting instead of writing a better answer. Their machinery (checklist
# scoring, ROI thresholds, per-round schedules) is not here, and the note says so.
SENSITIVITIES: dict[str, str] = {
    "checklist": "strict",
    "checklist_scored": "strict",
    "checklist_gated": "strict",
    "adversarial": "strict",
    "consistency": "strict",
    "roi_conservative": "strict",
    "roi": "balanced",
    "roi_balanced": "balanced",
    "sequential": "balanced",
    "reflective": "balanced",
    "diversity": "balanced",
    "roi_aggressive": "lenient",
}
