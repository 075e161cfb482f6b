"""An agent's `backend:` block in the predecessor's shape, rewritten in place to ours
(`translate_backend`): its keys with no effect dropped (`keys.BACKEND`), nested blocks
(`text:`, `reasoning:`) flattened, container execution read as local commands in the OS
sandbox, agent CLIs' own tool names sorted out, inference-server parameters moved into
`extra_body`, and the predecessor's own media tool files replaced by the built-in tools."""

from __future__ import annotations

from typing import Any

from massgen.config.predecessor.keys import (
    BACKEND,
    CUSTOM_TOOL,
    MCP_SERVER,
    SANDBOXED,
    TO_EXTRA_BODY,
)
from massgen.config.predecessor.rules import Note, Refused, apply, place, refuse, set_key, word
from massgen.core.errors import ConfigError

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
    itself = word(backend.get("type")) == "claude_code"
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
                set_key(backend, "enable_mcp_command_line", True, default=True)
            if rest:
                backend["allowed_tools"] = rest
        elif rest:
            backend["exclude_tools"] = [*backend.get("exclude_tools", []), *rest]
        if itself:
            set_key(backend, CLAUDE_CODE_KEYS[key], native)
        elif native:
            why = (
                "the agent's own tools here are the file tools of its `cwd` and, for an "
                "allowed `Bash`, `execute_command`"
            )
            notes.append(Note(f"{at}.{key} ({', '.join(native)})", why))


def translate_backend(backend: dict[str, Any], at: str, notes: list[Note], source: str) -> None:
    _container(backend, at, notes)
    # Claude Code run as itself reads its own permission mode (`backends/claude_code.py`).
    itself = word(backend.get("type")) == "claude_code"
    mode = backend.pop("permission_mode", None) if itself else None
    apply(backend, BACKEND, at, notes, source)
    if mode is not None:
        backend["permission_mode"] = mode
    if word(backend.get("type")) in AGENT_CLI_TYPES:
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
                apply(server, MCP_SERVER, f"{at}.mcp_servers[{index}]", notes, source)
    tools = backend.get("custom_tools")
    for index, tool in enumerate(tools if isinstance(tools, list) else ()):
        if isinstance(tool, dict):
            apply(tool, CUSTOM_TOOL, f"{at}.custom_tools[{index}]", notes, source)


def _container(backend: dict[str, Any], at: str, notes: list[Note]) -> None:
    """`command_line_execution_mode: docker|srt` -> local commands in our sandbox; the
    container's network mode -> `command_line_network` (anything but `none` is network)."""
    mode = word(backend.get("command_line_execution_mode"))
    if mode in ("docker", "srt"):
        del backend["command_line_execution_mode"]
        said = "is read as local commands in the OS sandbox"
        notes.append(Note(f"{at}.command_line_execution_mode ({mode})", SANDBOXED.why, said))
    network = backend.pop("command_line_docker_network_mode", None)
    if isinstance(network, str) and network.strip().lower() != "none":
        set_key(backend, "command_line_network", True, default=True)


def _thinking(backend: dict[str, Any]) -> None:
    """`reasoning: {type: disabled}` (Anthropic's thinking switch) asks for what massgen does
    unless `thinking_budget` is set; `type: enabled` goes with `budget_tokens`, which
    `_nested` maps."""
    block = backend.get("reasoning")
    if isinstance(block, dict) and word(block.get("type")) in ("disabled", "enabled"):
        block = dict(block)
        kind = block.pop("type")
        if kind == "disabled":
            block.pop("budget_tokens", None)
        if block:
            backend["reasoning"] = block
        else:
            del backend["reasoning"]


# The predecessor's own media tool files, as its configs name them in `custom_tools`: they
# import its internals, so each is replaced by the built-in tool (`tools/media/`).
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
            if not any(_value(backend, key) for key in _GENERATION_KEYS):
                refuse(where, _GENERATE_WITHOUT_MODE, source)
        else:
            node, key = place(backend, "media_tools")
            named = node.setdefault(key, [])
            if isinstance(named, list) and tool not in named:
                named.append(tool)
    if len(kept) != len(tools):
        backend["custom_tools"] = kept


def _value(backend: dict[str, Any], flat: str) -> Any:
    node, key = place(backend, flat)
    return node.get(key)


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
