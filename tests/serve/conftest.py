import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from serve_fixture import Server, chatty_agent, running_server, write_team

from massgen.testing.fake_provider import FakeProvider


@pytest.fixture(scope="session")
def fakes():
    """fast: instant; slow: 1 s before each reply (a run to hang up on); paced: a run a
    browser can watch (latency and a word rate)."""
    with (
        FakeProvider(chatty_agent) as fast,
        FakeProvider(chatty_agent, latency=1.0) as slow,
        FakeProvider(chatty_agent, latency=0.4, tokens_per_second=25) as paced,
    ):
        yield {"fast": fast, "slow": slow, "paced": paced}


@pytest.fixture(scope="session")
def server(tmp_path_factory, fakes) -> Server:
    folder = tmp_path_factory.mktemp("serve")
    (folder / "home").mkdir()
    teams = folder / "teams"
    teams.mkdir()
    write_team(folder / "team.yaml", fakes["fast"].base_url)
    write_team(teams / "slow.yaml", fakes["slow"].base_url)
    write_team(teams / "paced.yaml", fakes["paced"].base_url, workspaces=True)
    write_team(teams / "broken.yaml", "not a url", n=0)
    with running_server(folder, "--config", "team.yaml", "--teams-dir", "teams") as running:
        yield running
