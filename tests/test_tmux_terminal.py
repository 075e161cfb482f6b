"""The tmux helper that CLI tests use: it starts `python -m massgen` from this checkout in
a clean environment, shows its screen, and reports its exit status."""

from __future__ import annotations

from tmux_terminal import start_massgen, start_python


def test_massgen_runs_in_tmux(tmp_path):
    with start_massgen(tmp_path, "--help") as term:
        term.wait_for("usage:", "massgen", scrollback=True)
        assert term.exit_status() == 0


def test_keys_reach_the_program_and_its_status_comes_back(tmp_path):
    script = "import sys; line = input('name? '); print('hello', line); sys.exit(3)"
    with start_python(tmp_path, "-c", script) as term:
        term.wait_for("name?")
        term.type("tmux")
        term.wait_for("hello tmux")
        assert term.exit_status() == 3
        assert term.settings_restored()


def test_a_program_that_leaves_raw_mode_on_is_caught(tmp_path):
    with start_python(tmp_path, "-c", "import tty; tty.setraw(0)") as term:
        assert term.exit_status() == 0
        assert not term.settings_restored()
