"""Whether the person may stop one agent now (`Orchestrator.stop`, the app's x key)."""

from __future__ import annotations

from collections.abc import Container, Sequence

STOPPED = "stopped by you"  # why a stopped agent is out, in its outcome's `failed_agents`


def refusal(
    agent: str, order: Sequence[str], out: Container[str], coordinating: bool
) -> str | None:
    """Why `agent` cannot be stopped, or None. `out`: the agents already out (failed or
    stopped). The run is never left without an agent working: that is Ctrl-C's job."""
    if agent not in order:
        return f"there is no agent {agent!r}"
    if not coordinating:
        return "the team is not coordinating now"
    if agent in out:
        return f"{agent} has already stopped"
    if [a for a in order if a not in out] == [agent]:
        return f"{agent} is the last agent working: Ctrl-C stops the run"
    return None
