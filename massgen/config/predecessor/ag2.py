"""The predecessor's AG2 agents (`backend: {type: ag2, agent_config: ...}`) as native
agents on the model their `llm_config` names.

An AG2 assistant is one LLM with a system message, and, with `code_execution_config`, a
code executor that runs the code blocks of its replies. Here it is a massgen agent on the
same provider and model: the system message becomes the agent's, and the executor
becomes the command tool (`execute_command`, in the OS sandbox, in the agent's workspace),
which the agent calls instead of writing code blocks for someone else to run. The agent
then takes part in coordination like any other, behind the same permission engine.

AG2 group chats (`group_config`: several AG2 agents behind one massgen agent, with a
speaker-selection pattern) are refused: massgen's own team is the way to run several
agents here, and the refusal says how to write the group as one.
"""

from __future__ import annotations

import re
from typing import Any

from massgen.config.predecessor.rules import Note, Refused, refuse, set_key

# AG2's `api_type` names -> our backend types (AG2's default is "openai").
API_TYPES = {
    "openai": "openai",
    "azure": "azure_openai",
    "anthropic": "claude",
    "google": "gemini",
    "gemini": "gemini",
    "groq": "groq",
    "cerebras": "cerebras",
    "together": "together",
    "ollama": "ollama",
}
# `llm_config` entry keys with a field of the same meaning here.
SAME_NAME = ("model", "api_key", "base_url", "api_version", "temperature", "top_p", "max_tokens")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
RUN_CODE_HINT = (
    "To run code, call the `execute_command` tool; code in the code blocks of your replies "
    "is not run."
)

GROUP_CHAT = Refused(
    "AG2 group chats (several AG2 agents behind one massgen agent) are not supported",
    "List the group's members as massgen agents, each with its `system_message` and its "
    "model (`backend.type`, `backend.model`); the team coordinates them and votes",
)
NO_AGENT = Refused(
    "an AG2 backend here is read from its `agent_config`, and there is none",
    "Add `agent_config: {llm_config: {api_type, model}}`, or use an API backend type",
)


def is_ag2(backend: dict[str, Any]) -> bool:
    return backend.get("type") == "ag2"


def native(agent: dict[str, Any], at: str, notes: list[Note], source: str) -> None:
    """Rewrite `agent`'s AG2 backend in place as the native backend of its LLM.

    Raises:
        ConfigError: a group chat, a missing or malformed `agent_config`, or an
            `api_type` massgen has no backend for, by key path.
    """
    backend = agent["backend"]
    at = f"{at}.backend"
    if backend.get("group_config"):
        refuse(f"{at}.group_config", GROUP_CHAT, source)
    spec = backend.get("agent_config")
    if not isinstance(spec, dict):
        refuse(f"{at}.agent_config", NO_AGENT, source)
    rest = {k: v for k, v in backend.items() if k not in ("type", "agent_config", "group_config")}
    ours = _llm(spec.get("llm_config"), f"{at}.agent_config.llm_config", notes, source)
    backend.clear()
    backend.update({**ours, **rest})
    system = spec.get("system_message")
    if isinstance(system, str) and system.strip() and not agent.get("system_message"):
        agent["system_message"] = system
    _executor(spec.get("code_execution_config"), agent, f"{at}.agent_config", notes)
    dropped = sorted(set(spec) - {"type", "llm_config", "system_message", "code_execution_config"})
    if dropped:
        why = "AG2 agent options with no equivalent here (the agent's `id` names it)"
        notes.append(Note(f"{at}.agent_config ({', '.join(dropped)})", why))
    notes.append(Note(f"{at}.type (ag2)", _WHY_NATIVE.format(type=backend["type"]), _SAID))


_SAID = "is read as a native agent"
_WHY_NATIVE = (
    "the AG2 agent's model runs on the `{type}` backend, with its system message, and takes "
    "part in coordination like every other agent"
)


def _llm(config: Any, at: str, notes: list[Note], source: str) -> dict[str, Any]:
    """The first `llm_config` entry as our backend keys. AG2 takes a dict, a list of
    entries, or a dict with `config_list` (entries) and shared options."""
    shared: dict[str, Any] = {}
    entries: Any = config
    if isinstance(config, dict):
        shared = {k: v for k, v in config.items() if k != "config_list"}
        entries = config.get("config_list", [shared])
    if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict):
        bad = Refused("an AG2 agent's model comes from its `llm_config`", _LLM_FIX)
        refuse(at, bad, source)
    if len(entries) > 1:
        why = (
            f"the first of its {len(entries)} entries is the agent's model; AG2 tried the "
            "others in turn when one failed, and massgen retries the same provider instead"
        )
        notes.append(Note(f"{at}[1:]", why))
    entry = {**shared, **entries[0]}
    kind = str(entry.get("api_type") or "openai").lower()
    if kind not in API_TYPES:
        offered = ", ".join(sorted(API_TYPES))
        bad = Refused(f"AG2's api_type `{kind}` has no backend here", f"Use one of {offered}")
        refuse(f"{at}.api_type", bad, source)
    if not entry.get("model"):
        refuse(f"{at}.model", Refused("an AG2 llm_config entry needs its model", _LLM_FIX), source)
    ours = {"type": API_TYPES[kind], **{k: entry[k] for k in SAME_NAME if k in entry}}
    if "cache_seed" in entry:
        notes.append(Note(f"{at}.cache_seed", "replies are not cached; each run asks the model"))
    unknown = sorted(set(entry) - {*SAME_NAME, "api_type", "cache_seed"})
    if unknown:
        notes.append(Note(f"{at} ({', '.join(unknown)})", "AG2 client options with no field here"))
    return ours


_LLM_FIX = "Give `llm_config: {api_type: openai, model: gpt-5}` (or a list of such entries)"


def _executor(config: Any, agent: dict[str, Any], at: str, notes: list[Note]) -> None:
    """`code_execution_config: {executor: {type, timeout, work_dir}}` -> the command tool,
    in a workspace named after `work_dir`, with the executor's timeout."""
    if not isinstance(config, dict) or not config:
        return
    found = config.get("executor")
    executor: dict[str, Any] = found if isinstance(found, dict) else {}
    backend = agent["backend"]
    set_key(backend, "enable_mcp_command_line", True)
    timeout = executor.get("timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        set_key(backend, "command_line_timeout_seconds", timeout, default=True)
    if not backend.get("cwd"):
        backend["cwd"] = _workspace_name(executor.get("work_dir"), agent.get("id"))
    base = agent.get("system_message")
    agent["system_message"] = f"{base}\n\n{RUN_CODE_HINT}" if base else RUN_CODE_HINT
    kind = executor.get("type") or "an executor"
    why = (
        f"{kind} becomes the command tool: the agent runs code by calling `execute_command` "
        f"in the OS sandbox, in its workspace `{backend['cwd']}`, not from its replies' code "
        "blocks"
    )
    notes.append(Note(f"{at}.code_execution_config", why, said="is read as the command tool"))


def _workspace_name(work_dir: Any, agent_id: Any) -> str:
    """`work_dir`'s last part when it is a plain name, else one from the agent's id."""
    if isinstance(work_dir, str):
        name = work_dir.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if _NAME.match(name):
            return name
    fallback = f"{agent_id}_workspace" if isinstance(agent_id, str) else "workspace"
    return fallback if _NAME.match(fallback) else "workspace"
