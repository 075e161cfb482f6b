"""The predecessor's config keys that our schema does not declare, each with what it means
here. Applied to the parsed file before validation (`translate`):

    mapped    rewritten to our typed keys: `text: {verbosity}` -> `verbosity`,
              `reasoning: {effort, summary}` -> `reasoning_effort`/`reasoning_summary`,
              `ui.type`/`display:` -> `ui.display_type`, `top_k`-style server parameters
              -> `extra_body`, `append_system_prompt` -> the end of `system_message`,
              `custom_tools` entries naming the predecessor's own media tool files ->
              the built-in media tools (`media_tools`, `tools/media.py`)
    no effect accepted and dropped, with a note (`--validate` prints them): massgen
              already does what the key asked for its own way (`snapshot_storage`: every
              run has its own snapshot store), or the key tuned a mechanism massgen does
              not have and the run means the same without it
    refused   a ConfigError naming the key path, why, and what to use instead

A key set to an "off" value (false, 0, null, empty) asks for nothing and is dropped
without a note. Keys not listed here go on to the schema, which knows the rest.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from massgen.core.errors import ConfigError


@dataclass(frozen=True, slots=True)
class NoEffect:
    why: str


@dataclass(frozen=True, slots=True)
class Refused:
    why: str
    instead: str


Disposition = NoEffect | Refused

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
_SANDBOXED = NoEffect(
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
    "the sandbox bounds a command by its timeout (`command_line_timeout_seconds`) and "
    "output size, not by memory or CPU quotas"
)
_MEMORY = Refused(
    "the `memory` block (mem0 conversation and persistent memory over a Qdrant vector "
    "store, with LLM fact extraction and context compression) is not part of this version",
    "Remove the block; a chat keeps its history (`massgen` interactive mode, --continue), "
    "and `orchestrator.coordination.enable_memory_filesystem_mode: true` gives the agents "
    "memories as files in their workspaces that carry across a chat's turns",
)
_NOT_HERE = Refused("this predecessor feature is not part of this version", "Remove the key")
_PROVIDER_TOOL = Refused("this provider-side tool option is not supported", "Remove the key")

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
    "betas": Refused("Anthropic beta features (computer use) are not supported", "Remove the key"),
    "enable_programmatic_flow": _PROVIDER_TOOL,
    "enable_tool_search": _PROVIDER_TOOL,
    "tool_search_variant": _PROVIDER_TOOL,
    "debug_delay_seconds": _INJECTION_TEST,
    "debug_delay_after_n_tools": _INJECTION_TEST,
    "agent_config": Refused("AG2 agents are not supported", "Use an API backend type"),
    "group_config": Refused("AG2 group chats are not supported", "Use an API backend type"),
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
    "dspy": _NOT_HERE,
    "enable_nlip": _NOT_HERE,
    "nlip": _NOT_HERE,
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
}

TIMEOUTS: dict[str, Disposition] = {
    "initial_round_timeout_seconds": _ROUND_TIMEOUTS,
    "subsequent_round_timeout_seconds": _ROUND_TIMEOUTS,
    "round_timeout_grace_seconds": _ROUND_TIMEOUTS,
}

MCP_SERVER: dict[str, Disposition] = {
    "security": NoEffect(
        "servers start with a scrubbed environment and the permission engine decides every call"
    ),
    "defer_loading": NoEffect("every tool of a server is offered from the start"),
}

TOP: dict[str, Disposition] = {
    "memory": _MEMORY,
    # One example puts its task here; the predecessor never read the key (the question
    # came from the command line, as the example's own comment runs it).
    "task": NoEffect("the question is given on the command line (or typed in a chat)"),
    "nlip": _NOT_HERE,
}

AGENT: dict[str, Disposition] = {
    "memory": _MEMORY,
    "nlip": _NOT_HERE,
    "enable_nlip": _NOT_HERE,
}


# ---------------------------------------------------------------- the pass


@dataclass(frozen=True, slots=True)
class Note:
    path: str
    why: str
    said: str = "has no effect here"  # or what it was mapped to

    def __str__(self) -> str:
        return f"`{self.path}` {self.said}: {self.why}"


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


def _sensitivity(node: dict[str, Any], at: str, notes: list[Note]) -> None:
    value = _word(node.get("voting_sensitivity"))
    ours = SENSITIVITIES.get(value.strip().lower()) if value else None
    if ours is None:
        return
    node["voting_sensitivity"] = ours
    why = (
        f"agents vote with the `{ours}` bar; the predecessor's scoring machinery for "
        f"`{value}` is not part of this version"
    )
    notes.append(Note(f"{at}.voting_sensitivity ({value})", why, said=f"is read as `{ours}`"))


_AGENT_KEY = re.compile(r"^agents\[(\d+)\]\.(.+)$")


def grouped(notes: list[Note]) -> list[str]:
    """The notes as lines, one per key and reason: the same key of several agents is one
    line naming them (`agents[*].backend.x (agents 0, 1, 2)`), not one line each."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for note in notes:
        match = _AGENT_KEY.match(note.path)
        rest, agent = (match.group(2), match.group(1)) if match else (note.path, "")
        groups.setdefault((rest, note.why, note.said), []).append(agent)
    lines = []
    for (rest, why, said), agents in groups.items():
        if len(agents) > 1 and all(agents):
            path = f"agents[*].{rest}` (agents {', '.join(agents)})"
            lines.append(f"`{path} {said}: {why}")
        else:
            lines += [str(Note(f"agents[{a}].{rest}" if a else rest, why, said)) for a in agents]
    return lines


def translate(raw: Any, source: str) -> tuple[Any, list[Note]]:
    """`raw` with predecessor keys mapped or dropped, and a note per dropped key that
    asked for something.

    Raises:
        ConfigError: the first refused key, with its path, the reason and the fix.
    """
    if not isinstance(raw, dict):
        return raw, []
    data = copy.deepcopy(raw)
    notes: list[Note] = []
    _apply(data, TOP, "", notes, source)
    if isinstance(data.get("timeout"), dict) and "timeout_settings" not in data:
        data["timeout_settings"] = data.pop("timeout")  # the predecessor's older name
    _display(data)
    single = "agent" in data and isinstance(data["agent"], dict)
    for at, agent in _agents(data, single):
        _agent(agent, at, notes, source)
    _skills_directory(data)
    sections = (("orchestrator", ORCHESTRATOR), ("timeout_settings", TIMEOUTS))
    for key, table in sections:
        if isinstance(data.get(key), dict):
            _apply(data[key], table, key, notes, source)
    orchestrator = data.get("orchestrator")
    coordination = orchestrator.get("coordination") if isinstance(orchestrator, dict) else None
    if isinstance(coordination, dict):
        _apply(coordination, COORDINATION, "orchestrator.coordination", notes, source)
        _subagent_agents(coordination, notes, source)
        _generators(coordination, notes, source)
        _changedoc(coordination, _any_workspace(data, single), notes)
    if isinstance(orchestrator, dict):
        _sensitivity(orchestrator, "orchestrator", notes)
    return data, notes


def _generators(coordination: dict[str, Any], notes: list[Note], source: str) -> None:
    for key in ("persona_generator", "evaluation_criteria_generator"):
        block = coordination.get(key)
        if isinstance(block, dict):
            _apply(block, GENERATOR, f"orchestrator.coordination.{key}", notes, source)


def _any_workspace(data: dict[str, Any], single: bool) -> bool:
    return any(
        isinstance(agent.get("backend"), dict) and bool(agent["backend"].get("cwd"))
        for _, agent in _agents(data, single)
    )


def _changedoc(coordination: dict[str, Any], workspace: bool, notes: list[Note]) -> None:
    """`enable_changedoc` with no agent that has a workspace: the predecessor accepted it
    (and told agents to write a file they had nowhere to keep); here it is dropped with a
    note."""
    if coordination.get("enable_changedoc") is True and not workspace:
        del coordination["enable_changedoc"]
        why = (
            "the changedoc is a file in an agent's workspace (`tasks/changedoc.md`), and no "
            "agent has one; give them `backend.cwd`"
        )
        notes.append(Note("orchestrator.coordination.enable_changedoc", why))


def _skills_directory(data: dict[str, Any]) -> None:
    """`orchestrator.skills_directory`, where some of the predecessor's configs put it:
    the coordination key's value (which wins where both are set)."""
    orchestrator = data.get("orchestrator")
    if not isinstance(orchestrator, dict) or "skills_directory" not in orchestrator:
        return
    value = orchestrator.pop("skills_directory")
    if orchestrator.get("coordination") is None:
        orchestrator["coordination"] = {}
    coordination = orchestrator["coordination"]
    if isinstance(coordination, dict) and value is not None:
        coordination.setdefault("skills_directory", value)


def _subagent_agents(coordination: dict[str, Any], notes: list[Note], source: str) -> None:
    """The agents a subagent runs as are agents too: their keys translate the same way."""
    block = coordination.get("subagent_orchestrator")
    agents = block.get("agents") if isinstance(block, dict) else None
    if not isinstance(agents, list):
        return
    at = "orchestrator.coordination.subagent_orchestrator.agents"
    for index, agent in enumerate(agents):
        if isinstance(agent, dict):
            _agent(agent, f"{at}[{index}]", notes, source)


def _agents(data: dict[str, Any], single: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    if single:
        yield "agent", data["agent"]
        return
    agents = data.get("agents")
    if isinstance(agents, list):
        for index, agent in enumerate(agents):
            if isinstance(agent, dict):
                yield f"agents[{index}]", agent


def _agent(agent: dict[str, Any], at: str, notes: list[Note], source: str) -> None:
    _apply(agent, AGENT, at, notes, source)
    _sensitivity(agent, at, notes)
    append = agent.pop("append_system_prompt", None)
    if isinstance(append, str) and append.strip():
        base = agent.get("system_message")
        agent["system_message"] = f"{base}\n\n{append}" if isinstance(base, str) else append
    backend = agent.get("backend")
    if not isinstance(backend, dict):
        return
    _backend(backend, f"{at}.backend", notes, source)


# Claude Code's own tool names, as its configs list them in `allowed_tools`.
CLAUDE_CODE_TOOLS = frozenset(
    [
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "Bash",
        "BashOutput",
        "KillShell",
        "Grep",
        "Glob",
        "LS",
        "WebSearch",
        "WebFetch",
        "TodoWrite",
        "NotebookEdit",
        "NotebookRead",
        "Task",
        "ExitPlanMode",
    ]
)
AGENT_CLI_TYPES = frozenset({"claude_code", "codex", "gemini_cli"})


def _native_tools(backend: dict[str, Any], at: str, notes: list[Note]) -> None:
    """An agent CLI's own tool names in `allowed_tools`/`disallowed_tools`: massgen's file
    tools come with `cwd`; an allowed `Bash` is the `execute_command` tool; MCP names stay
    (a disallowed one becomes an `exclude_tools` entry)."""
    for key in ("allowed_tools", "disallowed_tools"):
        names = backend.get(key)
        if not isinstance(names, list):
            continue
        native = [n for n in names if n in CLAUDE_CODE_TOOLS]
        rest = [n for n in names if n not in CLAUDE_CODE_TOOLS]
        if not native:
            continue
        del backend[key]
        if key == "allowed_tools":
            if "Bash" in native:
                backend.setdefault("enable_mcp_command_line", True)
            if rest:
                backend["allowed_tools"] = rest
        elif rest:
            backend["exclude_tools"] = [*backend.get("exclude_tools", []), *rest]
        why = (
            "the agent's own tools here are the file tools of its `cwd` and, for an "
            "allowed `Bash`, `execute_command`"
        )
        notes.append(Note(f"{at}.{key} ({', '.join(native)})", why))


def _word(value: Any) -> str | None:
    """A value compared against names: a string, else None (the schema says what is wrong
    with it; comparing a list here would raise instead)."""
    return value if isinstance(value, str) else None


def _backend(backend: dict[str, Any], at: str, notes: list[Note], source: str) -> None:
    _container(backend, at, notes)
    _apply(backend, BACKEND, at, notes, source)
    if _word(backend.get("type")) in AGENT_CLI_TYPES:
        _native_tools(backend, at, notes)
    _nested(backend, "text", {"verbosity": "verbosity"}, at, source)
    _thinking(backend)
    _nested(
        backend,
        "reasoning",
        {
            "effort": "reasoning_effort",
            "summary": "reasoning_summary",
            "budget_tokens": "thinking_budget",
        },
        at,
        source,
    )
    _media_tools(backend, at, source)
    moved = {k: backend.pop(k) for k in TO_EXTRA_BODY if k in backend}
    if moved:
        extra = backend.get("extra_body")
        backend["extra_body"] = {**moved, **(extra if isinstance(extra, dict) else {})}
    servers = backend.get("mcp_servers")
    entries = servers.values() if isinstance(servers, dict) else servers
    if isinstance(entries, list) or isinstance(servers, dict):
        for index, server in enumerate(entries or ()):
            if isinstance(server, dict):
                _apply(server, MCP_SERVER, f"{at}.mcp_servers[{index}]", notes, source)


def _container(backend: dict[str, Any], at: str, notes: list[Note]) -> None:
    """`command_line_execution_mode: docker|srt` -> local commands in our sandbox; the
    container's network mode -> `command_line_network` (anything but `none` is network)."""
    mode = _word(backend.get("command_line_execution_mode"))
    if mode in ("docker", "srt"):
        del backend["command_line_execution_mode"]
        said = "is read as local commands in the OS sandbox"
        notes.append(Note(f"{at}.command_line_execution_mode ({mode})", _SANDBOXED.why, said))
    network = backend.pop("command_line_docker_network_mode", None)
    if isinstance(network, str) and network.strip().lower() != "none":
        backend.setdefault("command_line_network", True)


def _thinking(backend: dict[str, Any]) -> None:
    """`reasoning: {type: disabled}` (Anthropic's thinking switch) asks for what massgen does
    unless `thinking_budget` is set; `type: enabled` goes with `budget_tokens`, which
    `_nested` maps."""
    block = backend.get("reasoning")
    if isinstance(block, dict) and _word(block.get("type")) in ("disabled", "enabled"):
        block = dict(block)
        kind = block.pop("type")
        if kind == "disabled":
            block.pop("budget_tokens", None)
        if block:
            backend["reasoning"] = block
        else:
            del backend["reasoning"]


# The predecessor's own media tool files, as its configs name them in `custom_tools`: they
# import its internals, so each is replaced by the built-in tool (`tools/media.py`).
MEDIA_FILES = {
    "massgen/tool/_multimodal_tools/understand_image.py": "understand_image",
    "massgen/tool/_multimodal_tools/understand_audio.py": "understand_audio",
    "massgen/tool/_multimodal_tools/understand_video.py": "understand_video",
    "massgen/tool/_multimodal_tools/generation/generate_media.py": "generate_media",
}
_GENERATION_KEYS = ("enable_image_generation", "enable_audio_generation", "enable_video_generation")


def _media_tools(backend: dict[str, Any], at: str, source: str) -> None:
    """`custom_tools` entries naming a predecessor media file -> `media_tools` (and, for
    `generate_media`, the `enable_*_generation` keys that go with it)."""
    tools = backend.get("custom_tools")
    if not isinstance(tools, list):
        return
    kept: list[Any] = []
    for index, entry in enumerate(tools):
        path = entry.get("path") if isinstance(entry, dict) else None
        tool = _media_file(path) if isinstance(path, str) else None
        if tool is None:
            kept.append(entry)
            continue
        where = f"{at}.custom_tools[{index}]"
        if tool == "generate_media":
            if not any(backend.get(key) for key in _GENERATION_KEYS):
                _refuse(where, _GENERATE_WITHOUT_MODE, source)
        else:
            named = backend.setdefault("media_tools", [])
            if isinstance(named, list) and tool not in named:
                named.append(tool)
    if len(kept) != len(tools):
        backend["custom_tools"] = kept


def _media_file(path: str) -> str | None:
    """The tool a predecessor media file is (the path as its configs write it, relative to
    its checkout, or anywhere that ends so)."""
    posix = path.replace("\\", "/").removeprefix("./")
    return next((t for f, t in MEDIA_FILES.items() if posix == f or posix.endswith("/" + f)), None)


_GENERATE_WITHOUT_MODE = Refused(
    "the predecessor's `generate_media` file is built in here, for the modes you enable",
    "Replace the entry with `enable_image_generation: true` (or audio, video) on the backend",
)


def _nested(backend: dict[str, Any], key: str, names: dict[str, str], at: str, source: str) -> None:
    """`key: {sub: value}` -> our flat fields; a sub-key we have no field for is refused."""
    block = backend.get(key)
    if not isinstance(block, dict):
        return
    del backend[key]
    for sub, value in block.items():
        if sub not in names:
            fields = ", ".join(f"`{key}.{s}`" for s in names)
            raise ConfigError(
                f"`{key}.{sub}` is not supported",
                file=source,
                path=f"{at}.{key}.{sub}",
                fix=f"Remove it; {fields} {'is' if len(names) == 1 else 'are'} what is taken",
            )
        backend.setdefault(names[sub], value)


def _display(data: dict[str, Any]) -> None:
    """`display: {type, logging_enabled}` and `ui.type`: the predecessor's names for `ui`."""
    display = data.get("display")
    if isinstance(display, dict):
        del data["display"]
        ui = data.setdefault("ui", {})
        if isinstance(ui, dict):
            for key, value in display.items():
                ui.setdefault(key, value)
    ui = data.get("ui")
    if isinstance(ui, dict) and "type" in ui:
        ui.setdefault("display_type", ui.pop("type"))


def _apply(
    node: dict[str, Any], table: dict[str, Disposition], at: str, notes: list[Note], source: str
) -> None:
    for key in [k for k in node if k in table]:
        path = f"{at}.{key}" if at else key
        value = node[key]
        if _off(value):
            del node[key]
            continue
        disposition = table[key]
        if isinstance(disposition, Refused):
            _refuse(path, disposition, source)
        del node[key]
        notes.append(Note(path, disposition.why))


def _off(value: Any) -> bool:
    if isinstance(value, dict) and "enabled" in value:
        return value["enabled"] is False
    return value is None or value is False or value == 0 or value in ([], {}, "")


def _refuse(path: str, disposition: Refused, source: str) -> None:
    raise ConfigError(
        f"`{path}` is not supported: {disposition.why}", file=source, fix=disposition.instead
    )
