"""`massgen` itself in a real terminal (tmux) on the loopback fake: the live view with its
approver on, through to the result, the terminal left as it was.

The template for the permission engine's end-to-end case: give an agent a tool whose call
is asked, then `term.wait_for("permission asked")`, `term.keys(...)`, and read the ledger.
"""

from __future__ import annotations

import yaml
from tmux_terminal import require_tmux, start_massgen

from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import cooperative_agent


def write_team(folder, base_url: str) -> None:
    agents = [
        {"id": name, "backend": {"type": "chatcompletion", "model": name, "base_url": base_url}}
        for name in ("careful", "balanced")
    ]
    (folder / "team.yaml").write_text(yaml.safe_dump({"agents": agents}))


def test_a_live_run_in_a_real_terminal(tmp_path):
    require_tmux()
    with FakeProvider(cooperative_agent) as fake:
        write_team(tmp_path, fake.base_url)
        argv = ("--display", "live", "--config", "team.yaml", "What is 6 times 7?")
        with start_massgen(tmp_path, *argv) as term:
            term.wait_for("winner:", scrollback=True)
            assert term.exit_status(timeout=60) == 0
            assert term.settings_restored()
            shown = term.history()
    # The live view's result block ("votes:"), not the plain one ("votes —").
    assert "massgen · What is 6 times 7?" in shown and "votes:" in shown
