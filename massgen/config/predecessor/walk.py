"""The pass over a whole parsed file (`translate`): the top level, `display:`/`ui`, each
agent (its backend block is `backend.py`), the `memory:` and `dspy` blocks, and the
orchestrator's and coordination's keys. Each key the tables of `keys.py` name is applied
by `rules.apply`."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from massgen.config.predecessor import ag2, dspy, memory
from massgen.config.predecessor.backend import translate_backend
from massgen.config.predecessor.keys import (
    AGENT,
    BOOTSTRAP_CRITERIA,
    BOOTSTRAPPED,
    COORDINATION,
    GENERATOR,
    ORCHESTRATOR,
    SENSITIVITIES,
    TIMEOUTS,
    TOP,
)
from massgen.config.predecessor.rules import Note, apply, word


def _sensitivity(node: dict[str, Any], at: str, notes: list[Note]) -> None:
    value = word(node.get("voting_sensitivity"))
    ours = SENSITIVITIES.get(value.strip().lower()) if value else None
    if ours is None:
        return
    node["voting_sensitivity"] = ours
    why = (
        f"agents vote with the `{ours}` bar; the predecessor's scoring machinery for "
        f"`{value}` is not part of this version"
    )
    notes.append(Note(f"{at}.voting_sensitivity ({value})", why, said=f"is read as `{ours}`"))


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
    apply(data, TOP, "", notes, source)
    if isinstance(data.get("timeout"), dict) and "timeout_settings" not in data:
        data["timeout_settings"] = data.pop("timeout")  # the predecessor's older name
    _display(data)
    single = "agent" in data and isinstance(data["agent"], dict)
    for at, agent in _agents(data, single):
        _agent(agent, at, notes, source)
    memory.memory(data, _any_workspace(data, single), notes, source)
    _skills_directory(data)
    first = next((agent.get("backend") for _, agent in _agents(data, single)), None)
    dspy.paraphraser(data, first if isinstance(first, dict) else None, notes, source)
    sections = (("orchestrator", ORCHESTRATOR), ("timeout_settings", TIMEOUTS))
    for key, table in sections:
        if isinstance(data.get(key), dict):
            apply(data[key], table, key, notes, source)
    orchestrator = data.get("orchestrator")
    coordination = orchestrator.get("coordination") if isinstance(orchestrator, dict) else None
    if isinstance(coordination, dict):
        apply(coordination, COORDINATION, "orchestrator.coordination", notes, source)
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
    mode = word(coordination.get("criteria_mode"))
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
            apply(block, GENERATOR, f"orchestrator.coordination.{key}", notes, source)


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
    apply(agent, AGENT, at, notes, source)
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
    translate_backend(backend, f"{at}.backend", notes, source)


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
