"""`massgen` in a real terminal (tmux) opens the app; after the run, q leaves it with the
terminal as it was, exit 0, and the final answer printed to the normal screen."""

from __future__ import annotations

from app_driver import AGENTS, QUESTION, team_file
from tmux_terminal import require_tmux, start_massgen

from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import cooperative_agent


def test_massgen_on_a_terminal_opens_the_app_and_q_prints_the_answer(tmp_path):
    require_tmux()
    with FakeProvider(cooperative_agent) as fake:
        team_file(tmp_path, fake.base_url)
        with start_massgen(tmp_path, "--config", "team.yaml", QUESTION, height=36) as term:
            screen = term.wait_for("done: q quits", "Answers & votes", timeout=60)
            assert all(f"{agent} (agent" in screen for agent in AGENTS)
            assert "agreement: the 3 first answers" in screen
            term.keys("q")
            assert term.exit_status(timeout=30) == 0
            assert term.settings_restored()
            shown = term.history()
    # After the app: the result block in the scrollback, the answer last.
    after = shown.rsplit("done: q quits", 1)[-1]
    assert "winner:" in after and "Final answer from " in after and "logs: " in after
