"""`massgen` with no question in a real terminal (tmux) opens the app in chat mode: two
turns typed into its input box, `/quit`; the terminal as it was, exit 0, and the turns
printed to the normal screen after the app."""

from __future__ import annotations

import time

from app_driver import chat_team_file
from chat_policy import chat_policy
from tmux_terminal import require_tmux, start_massgen

from massgen.testing.fake_provider import FakeProvider

ASK = "ask the team, or /help"


def test_massgen_without_a_question_opens_the_app_in_chat_mode(tmp_path):
    require_tmux()
    with FakeProvider(chat_policy) as fake:
        chat_team_file(tmp_path, fake.base_url)
        with start_massgen(tmp_path, "--config", "team.yaml", height=36) as term:
            screen = term.wait_for("massgen chat · 3 agent(s)", ASK, timeout=60)
            term.type("What is 6 times 7?")
            term.wait_until(lambda s: "6 times 7 is 42." in s and ASK in s, "turn 1", 60)
            term.type("Add 8 to that.")
            term.wait_until(lambda s: "42 + 8 = 50." in s and ASK in s, "turn 2", 60)
            term.keys("Escape")  # out of the input box; then c: the Chat tab
            time.sleep(1.5)  # sooner, tmux (escape-time) and Textual read Esc c as Alt+c
            term.keys("c")
            screen = term.wait_for("turn 2 · Add 8 to that.", timeout=30)
            assert "▶ turn 1 · What is 6 times 7?" in screen and "› Add 8 to that." in screen
            term.keys("i")
            term.type("/quit")
            assert term.exit_status(timeout=30) == 0
            assert term.settings_restored()
            shown = term.history()
    after = shown.rsplit(ASK, 1)[-1]
    assert "› What is 6 times 7?" in after and "6 times 7 is 42." in after
    assert "42 + 8 = 50." in after and "saved · `massgen --continue` resumes it" in after
