"""The app in a real terminal (tmux) on every way out: the terminal is left as it was
(its modes, the normal screen back), whether the user quits, the app crashes (which
says so, with the log path) or signals end the process; and NO_COLOR draws no colour."""

from __future__ import annotations

import re
from pathlib import Path

from app_driver import QUESTION, team_file
from tmux_terminal import TmuxTerminal, require_tmux, start_massgen, start_python

from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import Fault, Reply, cooperative_agent

HERE = Path(__file__).parent
LOADED = 180  # seconds: a run of the CLI takes a minute and more on a loaded 2-core machine
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def stalls_after_answering(request):
    """Every agent answers, then the model named "slow" stalls: a run that is still going."""
    if request["model"] == "slow" and "[slow answer 1]" in str(request["messages"]):
        return Reply(fault=Fault(stall_seconds=60))
    return cooperative_agent(request)


def left_clean(term: TmuxTerminal) -> bool:
    return term.settings_restored() and not term.in_alternate_screen()


def colours(screen: str) -> set[str]:
    """The colours the escape codes on `screen` set, other than greys (r = g = b)."""
    found = set()
    for codes in SGR.findall(screen):
        parts = [int(p) for p in codes.split(";") if p]
        while parts:
            code = parts.pop(0)
            if code in (38, 48) and parts and parts[0] == 2:
                rgb = parts[1:4]
                del parts[:4]
                if len(set(rgb)) > 1:
                    found.add(f"{code};2;{rgb}")
            elif code in (38, 48) and parts and parts[0] == 5:
                if not _grey(parts[1]):
                    found.add(f"{code};5;{parts[1]}")
                del parts[:2]
            elif 30 <= code <= 37 or 40 <= code <= 47 or 90 <= code <= 97 or 100 <= code <= 107:
                found.add(str(code))
    return found


def _grey(index: int) -> bool:
    """Whether colour `index` of the 256 is a grey: the grey ramp, black and white, or
    an equal-parts entry of the 6x6x6 cube (tmux maps true colour to these)."""
    if index >= 232 or index in (0, 7, 8, 15):
        return True
    if 16 <= index <= 231:
        cube = index - 16
        return cube // 36 == cube // 6 % 6 == cube % 6
    return False


def test_no_color_at_80x24_resized_then_q(tmp_path):
    require_tmux()
    with FakeProvider(cooperative_agent) as fake:
        team_file(tmp_path, fake.base_url)
        argv = ("--config", "team.yaml", "--display", "tui", QUESTION)
        options = {"width": 80, "height": 24}
        with start_massgen(tmp_path, *argv, env={"NO_COLOR": "1"}, **options) as term:
            term.wait_for("done: q quits", "Answers & votes", timeout=LOADED)
            assert colours(term.screen(styles=True)) == set()
            term.resize(100, 30)
            term.wait_until(lambda s: max(map(len, s.splitlines())) > 80, "a wider screen")
            term.wait_for("done: q quits", "Answers & votes")
            term.keys("q")
            assert term.exit_status(timeout=LOADED) == 0
            assert left_clean(term)
        # The same run with colours shows them: the check above can see colour.
        with start_massgen(tmp_path, *argv, **options) as term:
            term.wait_for("done: q quits", timeout=LOADED)
            assert colours(term.screen(styles=True))
            term.keys("q")
            assert term.exit_status(timeout=LOADED) == 0


def test_a_crash_leaves_the_terminal_clean_and_says_where_the_logs_are(tmp_path):
    require_tmux()
    with FakeProvider(stalls_after_answering) as fake:
        team_file(tmp_path, fake.base_url, ("careful", "slow"))
        argv = (str(HERE / "crashing_app.py"), "--config", "team.yaml", QUESTION)
        with start_python(tmp_path, *argv, height=36) as term:
            assert term.exit_status(timeout=LOADED) == 2
            assert left_clean(term)
            shown = term.history()
    assert "RuntimeError: a widget's bug" in shown
    assert "massgen: the app failed (RuntimeError: a widget's bug); the run was stopped" in shown
    assert "Logs: " in shown and "resume with: massgen --resume " in shown
    assert "locals" not in shown  # Textual's own traceback lists every frame's variables


def test_signals_end_the_app_with_the_terminal_clean(tmp_path):
    require_tmux()
    with FakeProvider(stalls_after_answering) as fake:
        team_file(tmp_path, fake.base_url, ("careful", "slow"))
        argv = ("--config", "team.yaml", QUESTION)
        # One SIGTERM: the run stops keeping what was decided, the app closes.
        with start_massgen(tmp_path, *argv, height=36) as term:
            term.wait_for("answers 2", timeout=LOADED)
            term.signal("TERM")
            assert term.exit_status(timeout=LOADED) == 4
            assert left_clean(term)
            assert "massgen: interrupted; kept the best answer so far." in term.history()
        # Two: the second exits at once (os._exit), the terminal given back first.
        with start_massgen(tmp_path, *argv, height=36) as term:
            term.wait_for("answers 2", timeout=LOADED)
            term.signal("TERM")
            term.signal("TERM")
            assert term.exit_status(timeout=LOADED) == 4
            assert left_clean(term)
