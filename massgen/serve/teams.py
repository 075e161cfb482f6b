"""The teams a request's `model` can name.

- `massgen`: the config the server was started with (`--config`, else the default team);
- `@examples/NAME`: any shipped preset;
- `NAME`: a config file `NAME.yaml|.yml|.json` directly inside `--teams-dir`.

A name is looked up in what is listed; it is never turned into a path, so `../x` or an
absolute path names nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from massgen.core.errors import ConfigError
from massgen.runs.loading import ConfigLike, LoadedConfig, load

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
            return load(self.served)
        if name.startswith("@examples/"):
            from massgen.config.presets import list_examples

            if name.removeprefix("@examples/") in {n for n, _ in list_examples()}:
                return load(name)
        files = self._files()
        if name in files:
            return load(str(files[name]))
        raise UnknownTeam(name, [team.name for team in self.listed()])

    def _files(self) -> dict[str, Path]:
        if self.teams_dir is None or not self.teams_dir.is_dir():
            return {}
        found: dict[str, Path] = {}
        for path in sorted(self.teams_dir.iterdir())[:MAX_TEAM_FILES]:
            if path.suffix in CONFIG_SUFFIXES and path.is_file() and path.stem != SERVED:
                found.setdefault(path.stem, path)
        return found
