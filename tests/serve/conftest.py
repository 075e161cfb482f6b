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


# --- a real browser (Debian's chromium, driven by Playwright), shared by the page tests -----

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


@pytest.fixture(scope="module")  # a module's tests share one browser
def browser():
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()
