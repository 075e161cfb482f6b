"""Teams on the loopback fakes, as the tests and `bench/` write them into a config."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def workspace_agents(
    base_url: str, ids: Sequence[str], model: str = "m", **backend: Any
) -> list[dict[str, Any]]:
    """One chatcompletion agent per id on the fake at `base_url`, each with its own
    workspace `ws<n>`; `model` may hold `{n}` (the agent's place) or `{id}` to tell the
    agents apart; `backend`: more keys every agent's backend gets."""
    return [
        {
            "id": agent,
            "backend": {
                "type": "chatcompletion",
                "base_url": base_url,
                "api_key": "k",
                "model": model.format(n=n, id=agent),
                "cwd": f"ws{n}",
                **backend,
            },
        }
        for n, agent in enumerate(ids)
    ]
