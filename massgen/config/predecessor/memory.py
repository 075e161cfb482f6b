"""The predecessor's top-level `memory:` block as filesystem memory.

There, `persistent_memory` was long-term knowledge the agents kept across turns and
sessions: mem0 extracted facts with an LLM into a Qdrant vector store, and retrieved the
closest ones into the prompt. Here the same wish is filesystem memory
(`orchestrator.coordination.enable_memory_filesystem_mode`, `workspace/memory.py`): the
agents write their memories as Markdown files in their workspaces (`memory/short_term`
shown to everyone, `memory/long_term` listed and read on demand), and a chat carries the
winner's to the next turn. What only mem0 had (its fact-extracting model, embeddings, the
vector store, context compression) is named in the note, not silently lost.

`conversation_memory` alone (short-term history) asks for what every run does: a chat
keeps its history.
"""

from __future__ import annotations

from typing import Any

from massgen.config.predecessor.rules import Note, Refused, refuse

MEMORY_KEY = "enable_memory_filesystem_mode"
NEEDS_WORKSPACE = Refused(
    "persistent memory is kept here as files in the agents' workspaces (filesystem "
    "memory), and no agent has one",
    "Give the agents `backend.cwd`, or set `memory.persistent_memory.enabled: false`",
)
NOT_A_BLOCK = Refused(
    "the predecessor's `memory` is a block", "Write `memory: {enabled: true}`, or remove it"
)
# What mem0 did that the files do not: each is named in the note when the block sets it.
MEM0_ONLY = ("llm", "embedding", "vector_store", "qdrant", "on_disk", "session_name")
AS_FILES = (
    "agents keep memories as files in `memory/` of their workspaces, shown to every agent "
    "and carried across a chat's turns; they write them with the file tools"
)
NO_COMPRESSION = (
    "there is no context compression; a long run is bounded by the tool-call and answer "
    "limits, and an agent that outgrows its model's context fails while the team carries on"
)


def memory(data: dict[str, Any], has_workspace: bool, notes: list[Note], source: str) -> None:
    """Replace `data["memory"]` by what it means here (see the module docstring).

    Raises:
        ConfigError: persistent memory asked for with no agent workspace to keep it in.
    """
    block = data.pop("memory", None)
    if block is None or block is False:
        return
    if not isinstance(block, dict):
        refuse("memory", NOT_A_BLOCK, source)
    if block.get("enabled") is False:
        return
    persistent = block.get("persistent_memory")
    wanted = not (isinstance(persistent, dict) and persistent.get("enabled") is False)
    if wanted:
        if not has_workspace:
            refuse("memory.persistent_memory", NEEDS_WORKSPACE, source)
        _coordination(data)[MEMORY_KEY] = True
        mem0 = [k for k in MEM0_ONLY if isinstance(persistent, dict) and persistent.get(k)]
        why = AS_FILES + (f"; mem0's {', '.join(mem0)} are not used" if mem0 else "")
        notes.append(Note("memory.persistent_memory", why, said="is read as filesystem memory"))
    else:
        notes.append(Note("memory.conversation_memory", "a chat keeps its history"))
    if block.get("compression"):
        notes.append(Note("memory.compression", NO_COMPRESSION))
    tuning = [k for k in ("retrieval", "recording") if block.get(k)]
    if tuning:
        why = "mem0's retrieval and recording settings; filesystem memory shows memories instead"
        notes.append(Note(f"memory ({', '.join(tuning)})", why))


def _coordination(data: dict[str, Any]) -> dict[str, Any]:
    orchestrator = data.get("orchestrator")
    if not isinstance(orchestrator, dict):
        orchestrator = data["orchestrator"] = {}
    coordination = orchestrator.get("coordination")
    if not isinstance(coordination, dict):
        coordination = orchestrator["coordination"] = {}
    return coordination
