"""A served team is loaded once and reused until a file it is read from changes
(`serve/loads.py`): the reuse saves each request milliseconds, and must never serve a
config the user has since edited."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from massgen.core.errors import ConfigError
from massgen.serve.loads import FreshLoads
from massgen.serve.teams import Teams


def _team(path: Path, model: str) -> Path:
    backend = {"type": "chatcompletion", "base_url": "http://127.0.0.1:9/v1", "model": model}
    path.write_text(yaml.safe_dump({"agents": [{"id": "a", "backend": backend}]}))
    return path


def _model(teams: Teams, name: str = "massgen") -> str:
    return str(teams.load(name).config.agents[0].backend.model)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_an_unchanged_team_is_loaded_once(here: Path) -> None:
    teams = Teams(str(_team(here / "team.yaml", "m1")))
    assert teams.load("massgen") is teams.load("massgen")


def test_an_edited_team_file_is_read_again_by_the_next_request(here: Path) -> None:
    (here / "teams").mkdir()
    teams = Teams(str(_team(here / "team.yaml", "m1")), here / "teams")
    _team(here / "teams" / "other.yaml", "o1")
    assert (_model(teams), _model(teams, "other")) == ("m1", "o1")
    _team(here / "team.yaml", "model-two")
    _team(here / "teams" / "other.yaml", "other-two")
    assert (_model(teams), _model(teams, "other")) == ("model-two", "other-two")


def test_a_changed_env_file_or_environment_is_seen(here: Path, monkeypatch) -> None:
    path = here / "team.yaml"
    backend = {"type": "chatcompletion", "base_url": "http://127.0.0.1:9/v1", "model": "${M}"}
    path.write_text(yaml.safe_dump({"agents": [{"id": "a", "backend": backend}]}))
    (here / ".env").write_text("M=from-env-file\n")
    teams = Teams(str(path))
    assert _model(teams) == "from-env-file"
    (here / ".env").write_text("M=edited-env-file\n")
    assert _model(teams) == "edited-env-file"
    monkeypatch.setenv("M", "from-environment")  # the environment wins over .env
    assert _model(teams) == "from-environment"


def test_a_kept_load_is_checked_again_after_its_max_age(here: Path) -> None:
    now = [0.0]
    loads = FreshLoads(max_age_s=5.0, clock=lambda: now[0])
    path = str(_team(here / "team.yaml", "m1"))
    first = loads.load(path)
    now[0] = 4.9
    assert loads.load(path) is first
    now[0] = 5.1
    assert loads.load(path) is not first


def test_a_broken_config_is_not_kept_once_fixed(here: Path) -> None:
    path = here / "team.yaml"
    path.write_text("agents: [")
    teams = Teams(str(path))
    with pytest.raises(ConfigError):
        teams.load("massgen")
    _team(path, "fixed")
    assert _model(teams) == "fixed"


def test_the_kept_loads_are_bounded(here: Path) -> None:
    loads = FreshLoads(limit=2)
    paths = [str(_team(here / f"t{i}.yaml", f"m{i}")) for i in range(3)]
    first = loads.load(paths[0])
    loads.load(paths[1])
    loads.load(paths[2])  # the oldest, t0, goes
    assert loads.load(paths[0]) is not first
