"""Anonymous labels: the only names a model ever sees for the team's agents.

Each agent gets a stem (`agent2`) drawn from a seeded shuffle, so neither config order
nor real ids leak into prompts; an answer's label adds its version (`agent2.3`).
"""

from __future__ import annotations

import random
import re

_LABEL = re.compile(r"^\s*(agent\d+)\.(\d+)\s*$")


class Labels:
    def __init__(self, agent_ids: list[str], seed: int) -> None:
        numbers = list(range(1, len(agent_ids) + 1))
        random.Random(seed).shuffle(numbers)
        self._stem = {agent: f"agent{n}" for agent, n in zip(agent_ids, numbers, strict=True)}
        self._agent = {stem: agent for agent, stem in self._stem.items()}

    def stem(self, agent: str) -> str:
        return self._stem[agent]

    def label(self, agent: str, version: int) -> str:
        return f"{self._stem[agent]}.{version}"

    def parse(self, label: str) -> tuple[str, int] | None:
        """`agent2.3` -> (real agent id, 3); None for anything that is not a team label."""
        match = _LABEL.match(label)
        if not match or match.group(1) not in self._agent:
            return None
        return self._agent[match.group(1)], int(match.group(2))

    def as_dict(self) -> dict[str, str]:
        return dict(self._stem)
