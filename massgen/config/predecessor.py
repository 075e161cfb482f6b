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
from typing import Any

from massgen.config import predecessor_ag2 as ag2
from massgen.config import predecessor_dspy, predecessor_memory
from massgen.config.predecessor_keys import (
    AGENT,
    BACKEND,
    BOOTSTRAP_CRITERIA,
    BOOTSTRAPPED,
    COORDINATION,
    CUSTOM_TOOL,
    GENERATOR,
    MCP_SERVER,
    ORCHESTRATOR,
    SANDBOXED,
    SENSITIVITIES,
    TIMEOUTS,
    TO_EXTRA_BODY,
    TOP,
    Disposition,
    Note,
    Refused,
    refuse,
)
from massgen.core.errors import ConfigError

# ---------------------------------------------------------------- the pass


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
    predecessor_memory.memory(data, _any_workspace(data, single), notes, source)
    _skills_directory(data)
    first = next((agent.get("backend") for _, agent in _agents(data, single)), None)
    predecessor_dspy.paraphraser(data, first if isinstance(first, dict) else None, notes, source)
    sections = (("orchestrator", ORCHESTRATOR), ("timeout_settings", TIMEOUTS))
    for key, table in sections:
        if isinstance(data.get(key), dict):
            _apply(data[key], table, key, notes, source)
    orchestrator = data.get("orchestrator")
    coordination = orchestrator.get("coordination") if isinstance(orchestrator, dict) else None
    if isinstance(coordination, dict):
        _apply(coordination, COORDINATION, "orchestrator.coordination", notes, source)
        _subagent_agents(coordination, notes, source)
        _criteria_mode(coordination, notes)
        _generators(coordination, notes, source)
        _changedoc(coordination, _any_workspace(data, single), notes)
    if isinstance(orchestrator, dict):
        _sensitivity(orchestrator, "orchestrator", notes)
    return data, notes


def _criteria_mode(coordination: dict[str, Any], notes: list[Note]) -> None:
    """`criteria_mode`: `static` (the user's own criteria, or none) is what massgen does;
    the bootstrap modes are read as generated criteria."""
    mode = _word(coordination.get("criteria_mode"))
    if mode == "static":
        del coordination["criteria_mode"]
    elif mode in BOOTSTRAP_CRITERIA:
        del coordination["criteria_mode"]
        generator = coordination.setdefault("evaluation_criteria_generator", {})
        if isinstance(generator, dict):
            generator.setdefault("enabled", True)
        path = f"orchestrator.coordination.criteria_mode ({mode})"
        notes.append(Note(path, BOOTSTRAPPED, said="is read as generated criteria"))


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
    if ag2.is_ag2(backend):
        ag2.native(agent, at, notes, source)
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
AGENT_CLI_TYPES = frozenset({"claude_code", "codex", "gemini_cli", "antigravity_cli"})
# Where Claude Code's own names in each predecessor key go for `type: claude_code`.
CLAUDE_CODE_KEYS = {
    "allowed_tools": "claude_code_tools",
    "disallowed_tools": "claude_code_disallowed_tools",
}


def _native_tools(backend: dict[str, Any], at: str, notes: list[Note]) -> None:
    """An agent CLI's own tool names in `allowed_tools`/`disallowed_tools`. Claude Code
    (run as itself) gets them as its own tools (`claude_code_tools`,
    `claude_code_disallowed_tools`); the CLIs mapped onto an API get massgen's file tools
    of `cwd` instead. Either way an allowed `Bash` is also the sandboxed
    `execute_command`, and MCP names stay massgen's MCP filters (a disallowed one becomes
    an `exclude_tools` entry)."""
    itself = _word(backend.get("type")) == "claude_code"
    for key in ("allowed_tools", "disallowed_tools"):
        names = backend.get(key)
        if not isinstance(names, list):
            continue
        native = [n for n in names if n in CLAUDE_CODE_TOOLS]
        rest = [n for n in names if n not in CLAUDE_CODE_TOOLS]
        if key == "allowed_tools" and not native:
            continue  # MCP names only: massgen's own filter, as for any backend
        del backend[key]
        if key == "allowed_tools":
            if "Bash" in native:
                backend.setdefault("enable_mcp_command_line", True)
            if rest:
                backend["allowed_tools"] = rest
        elif rest:
            backend["exclude_tools"] = [*backend.get("exclude_tools", []), *rest]
        if itself:
            backend[CLAUDE_CODE_KEYS[key]] = native
        elif native:
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
    # Claude Code run as itself reads its own permission mode (`backends/claude_code.py`).
    itself = _word(backend.get("type")) == "claude_code"
    mode = backend.pop("permission_mode", None) if itself else None
    _apply(backend, BACKEND, at, notes, source)
    if mode is not None:
        backend["permission_mode"] = mode
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
    tools = backend.get("custom_tools")
    for index, tool in enumerate(tools if isinstance(tools, list) else ()):
        if isinstance(tool, dict):
            _apply(tool, CUSTOM_TOOL, f"{at}.custom_tools[{index}]", notes, source)


def _container(backend: dict[str, Any], at: str, notes: list[Note]) -> None:
    """`command_line_execution_mode: docker|srt` -> local commands in our sandbox; the
    container's network mode -> `command_line_network` (anything but `none` is network)."""
    mode = _word(backend.get("command_line_execution_mode"))
    if mode in ("docker", "srt"):
        del backend["command_line_execution_mode"]
        said = "is read as local commands in the OS sandbox"
        notes.append(Note(f"{at}.command_line_execution_mode ({mode})", SANDBOXED.why, said))
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
                refuse(where, _GENERATE_WITHOUT_MODE, source)
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
            refuse(path, disposition, source)
        del node[key]
        notes.append(Note(path, disposition.why))


def _off(value: Any) -> bool:
    if isinstance(value, dict) and "enabled" in value:
        return value["enabled"] is False
    return value is None or value is False or value == 0 or value in ([], {}, "")
