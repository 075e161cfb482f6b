"""The teams `ask_team` may name, and which of them can run on this machine.

The names are `massgen serve`'s (`serve/teams.py`): `massgen` for the served config,
`@examples/NAME` for a preset, `NAME` for a file in `--teams-dir`. A team can run here
when its config loads (which also checks that local models are installed) and every
agent has its API key: a listed team that then fails for a missing key would only waste
the calling agent's turn.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from massgen.backends import registry
from massgen.core.errors import ConfigError
from massgen.runs.loading import LoadedConfig
from massgen.serve.teams import Teams, UnknownTeam


@dataclass(frozen=True, slots=True)
class Runnable:
    name: str
    description: str
    agents: tuple[str, ...]  # "id (type model)" per agent


def missing(loaded: LoadedConfig) -> str | None:
    """Why `loaded` cannot run here (a missing API key), or None."""
    env = os.environ if loaded.env is None else loaded.env
    for agent in loaded.config.agents:
        try:
            registry.resolve_api_key(agent.backend, env)
        except ConfigError as error:
            return f"agent {agent.id}: {error.message}"
    return None


def load_runnable(teams: Teams, name: str) -> LoadedConfig:
    """The team `name`, loaded, when it can run here.

    Raises:
        UnknownTeam: nothing is listed under `name`.
        ConfigError: its config is invalid, or it needs a key or model this machine lacks.
    """
    loaded = teams.load(name)
    problem = missing(loaded)
    if problem is not None:
        raise ConfigError(f"team {name!r} cannot run here: {problem}", file=loaded.source)
    return loaded


def runnable(teams: Teams) -> list[Runnable]:
    """The listed teams that load and have every key they need, in listing order."""
    found = []
    for team in teams.listed():
        try:
            loaded = load_runnable(teams, team.name)
        except (ConfigError, UnknownTeam, OSError):
            continue
        agents = tuple(
            f"{a.id} ({a.backend.type} {a.backend.model or 'default model'})"
            for a in loaded.config.agents
        )
        found.append(Runnable(team.name, team.description, agents))
    return found
