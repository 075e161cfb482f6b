"""The teams a request's `model` can name.

- `massgen`: the config the server was started with (`--config`, else the default team);
- `@examples/NAME`: any shipped preset;
- `NAME`: a config file `NAME.yaml|.yml|.json` directly inside `--teams-dir`.

A name is looked up in what is listed; it is never turned into a path, so `../x` or an
absolute path names nothing. A team can run here when its config loads (which also checks
that local models are installed) and every agent has its API key (`runnable`): a listed
team that then fails for a missing key would only waste the caller's turn, so
`/v1/models` and `massgen mcp`'s `list_teams` show only those, and picking another one is
a `ConfigError` that says which key is missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from massgen.backends import registry
from massgen.core.errors import ConfigError
from massgen.runs.loading import ConfigLike, LoadedConfig, load
from massgen.serve.loads import FreshLoads

SERVED = "massgen"
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
MAX_TEAM_FILES = 500  # a huge directory lists its first files only


@dataclass(frozen=True, slots=True)
class Team:
    name: str
    description: str


class UnknownTeam(LookupError):
    def __init__(self, name: str, known: list[str]) -> None:
        shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
        super().__init__(f"no team named {name!r}; GET /v1/models lists them ({shown})")


class Teams:
    def __init__(self, served: ConfigLike, teams_dir: Path | None = None) -> None:
        self.served = served
        self.teams_dir = teams_dir
        self._loads = FreshLoads()  # a team is loaded again once its files change

    def check(self) -> None:
        """Load the served config once at start, so a broken one fails the command.

        Raises:
            ConfigError: the served config or `--teams-dir` is unusable.
        """
        load(self.served)
        if self.teams_dir is not None and not self.teams_dir.is_dir():
            raise ConfigError(
                f"--teams-dir {self.teams_dir}: not a directory",
                fix="give a directory of team config files",
            )

    def listed(self) -> list[Team]:
        from massgen.config.presets import list_examples

        teams = [Team(SERVED, f"the served config ({self.served or 'the default team'})")]
        teams += [Team(f"@examples/{name}", text) for name, text in list_examples()]
        teams += [Team(name, str(path)) for name, path in self._files().items()]
        return teams

    def load(self, name: str) -> LoadedConfig:
        """The team `name` names, loaded and checked.

        Raises:
            UnknownTeam: nothing is listed under `name`.
            ConfigError: the team's config is invalid (or needs a key that is not set).
        """
        if name == SERVED:
            return self._loads.load(self.served)
        if name.startswith("@examples/"):
            from massgen.config.presets import list_examples

            if name.removeprefix("@examples/") in {n for n, _ in list_examples()}:
                return self._loads.load(name)
        files = self._files()
        if name in files:
            return self._loads.load(str(files[name]))
        raise UnknownTeam(name, [team.name for team in self.listed()])

    def _files(self) -> dict[str, Path]:
        if self.teams_dir is None or not self.teams_dir.is_dir():
            return {}
        found: dict[str, Path] = {}
        for path in sorted(self.teams_dir.iterdir())[:MAX_TEAM_FILES]:
            if path.suffix in CONFIG_SUFFIXES and path.is_file() and path.stem != SERVED:
                found.setdefault(path.stem, path)
        return found


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
