"""Plain-text reports for the chat's slash commands, from a turn's folded state.

Pure functions: a `RunState` (or saved turns, or a config) in, text out. No rich import,
so they print the same in the live view, in plain mode and in tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from massgen.core.usage import Spend
from massgen.record.state import RunState
from massgen.record.text import preview
from massgen.ui.model import tally_text

if TYPE_CHECKING:
    from massgen.config.schema import MassgenConfig
    from massgen.sessions import SavedTurn


def answers_text(state: RunState) -> str:
    """Every answer of the turn, in full, newest version of each agent last."""
    blocks = []
    for agent_id, agent in state.agents.items():
        for answer in agent.answers:
            blocks.append(f"── {answer.label} · {agent_id} ──\n{answer.content.strip()}")
    return "\n\n".join(blocks) + "\n" if blocks else "no answers in the last turn\n"


def votes_text(state: RunState) -> str:
    """Each vote with its reason and whether it still stood, then the tally and winner."""
    if not state.votes:
        lines = ["no votes in the last turn"]
    else:
        lines = []
        for vote in state.votes:
            note = "" if vote.standing else f"  (retired: {vote.ended_by})"
            reason = f": {preview(vote.reason, 200)}" if vote.reason else ""
            lines.append(f"{vote.voter} → {vote.target_label}{reason}{note}")
    tally = state.outcome.tally if state.outcome else state.standing_tally()
    lines.append(f"tally: {tally_text(tally)}")
    if state.winner:
        lines.append(f"winner: {state.winner} ({state.winner_label})")
    return "\n".join(lines) + "\n"


def cost_text(state: RunState | None, turns: Sequence[SavedTurn]) -> str:
    """Tokens and cost of the last turn per agent, then of the whole session."""
    lines = []
    if state is not None and state.agents:
        lines.append("last turn:")
        for agent_id in state.agents:
            lines.append(f"  {agent_id:<20} {_usage(state.spend(agent_id))}")
        lines.append(f"  {'total':<20} {_usage(state.totals())}")
    tokens = sum(turn.total_tokens() for turn in turns)
    costs = [c for turn in turns if (c := turn.total_cost()) is not None]
    cost = f" · est. ${sum(costs):.4f}" if costs else " · cost unknown (no prices)"
    lines.append(f"session: {len(turns)} turn(s) · {tokens:,} tokens{cost}")
    return "\n".join(lines) + "\n"


def _usage(spend: Spend) -> str:
    usage = spend.usage
    text = f"{usage.input_tokens:>9,} in {usage.output_tokens:>8,} out"
    if usage.reasoning_tokens:
        text += f" ({usage.reasoning_tokens:,} reasoning)"
    if spend.cost_usd is not None:
        text += f"  ${spend.cost_usd:.4f}"
    return text


def config_text(config: MassgenConfig, source: str | None) -> str:
    """The team as configured: where it came from, each agent's backend and model."""
    lines = [f"config: {source or '(built from flags)'}"]
    for agent in config.agents:
        backend = agent.backend
        where = f" @ {backend.base_url}" if backend.base_url else ""
        lines.append(
            f"  {agent.id:<20} {backend.type} · {backend.model or '(default model)'}{where}"
        )
    o = config.orchestrator
    lines.append(
        f"orchestrator: answers per agent {o.max_new_answers_per_agent} · "
        f"voting {o.voting_sensitivity} · final answer {o.final_answer_strategy}"
    )
    timeout = config.timeout_settings.orchestrator_timeout_seconds
    lines.append(f"deadline: {timeout:g}s per turn")
    return "\n".join(lines) + "\n"
