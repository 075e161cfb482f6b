"""What a Python tool's `@context_params` parameters receive (the predecessor's
`ExecutionContext` fields, as far as they mean something here). Filled at each call, never
by the model: the parameters are not in the schema it is offered, and an argument naming
one is refused like any unknown argument.

    agent_id        the calling agent's id
    agent_cwd       its workspace directory (str), or None when it has none
    prompt          the conversation's user messages, [{"role": "user", "content": ...}]:
    user_messages     the task as the agent was given it (the question, the answers so
    messages          far); the predecessor's `messages` also held the system prompt
    allowed_paths   the paths its file tools may reach: its workspace, then the
                    `orchestrator.context_paths` (absolute str)
    backend_type    its `backend.type`
    model           its `backend.model`
    task_context    `CONTEXT.md` in its workspace (the first TASK_CONTEXT_CHARS), or None

Any other name (`backend_name`, `current_stage`, `multimodal_config`, ...) is refused when
the tool loads.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.core import safe_open
from massgen.core.toolbox import ToolContext

# The predecessor's bound on CONTEXT.md (`context/task_context.DEFAULT_MAX_CHARS`).
TASK_CONTEXT_CHARS = 10_000


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """What the config says about the agent whose tools these are."""

    backend_type: str | None = None
    model: str | None = None
    context_paths: tuple[str, ...] = ()


def agent_facts(config: MassgenConfig, agent: AgentConfig) -> AgentFacts:
    paths = tuple(
        str(Path(p.path).expanduser().resolve()) for p in config.orchestrator.context_paths
    )
    return AgentFacts(agent.backend.type, agent.backend.model, paths)


def _conversation(ctx: ToolContext, facts: AgentFacts) -> list[dict[str, str]]:
    return [{"role": "user", "content": ctx.task}] if ctx.task else []


def _allowed_paths(ctx: ToolContext, facts: AgentFacts) -> list[str]:
    own = [] if ctx.workspace is None else [str(ctx.workspace)]
    return own + list(facts.context_paths)


def _task_context(ctx: ToolContext, facts: AgentFacts) -> str | None:
    if ctx.workspace is None:
        return None
    try:  # by descriptor: a link (to a secret) or a FIFO there is no context
        folder = safe_open.open_root(ctx.workspace)
        try:
            data = safe_open.read_head(folder, "CONTEXT.md", TASK_CONTEXT_CHARS * 4)
        finally:
            os.close(folder)
    except OSError:  # none written (yet): the predecessor's `required=False` answer
        return None
    return data.decode("utf-8", errors="replace")[:TASK_CONTEXT_CHARS]


VALUES: dict[str, Callable[[ToolContext, AgentFacts], Any]] = {
    "agent_id": lambda ctx, facts: ctx.agent,
    "agent_cwd": lambda ctx, facts: None if ctx.workspace is None else str(ctx.workspace),
    "prompt": _conversation,
    "user_messages": _conversation,
    "messages": _conversation,
    "allowed_paths": _allowed_paths,
    "backend_type": lambda ctx, facts: facts.backend_type,
    "model": lambda ctx, facts: facts.model,
    "task_context": _task_context,
}


def context_values(names: tuple[str, ...], ctx: ToolContext, facts: AgentFacts) -> dict[str, Any]:
    """The value of each of `names` (all in VALUES: checked when the tool loaded)."""
    return {name: VALUES[name](ctx, facts) for name in names}
