"""Subagents, all in one place: the `spawn_subagents` tool and the child runs it starts.

    tool.py      the tools' contract and bounds (`spawn_subagents`, `list_subagents`,
                 `wait_subagents`, `cancel_subagent`); it is given a `Spawn` and never
                 starts a run itself
    jobs.py      background children as tasks of the parent's run, and their bounds
    children.py  each child as a team run of its own (`Subagents`, `child_config`),
                 started through `Setting.start_child`

The roles a child may be given are config (`config/subagent_types.py`): the loader checks
`coordination.subagent_types` against them, and `config/` is below `runs/`.
"""

from __future__ import annotations

from massgen.runs.subagents.children import SUBAGENT_NOTE, Subagents, child_config

__all__ = ["SUBAGENT_NOTE", "Subagents", "child_config"]
