"""The app opens before the config loads (`cli_output.app_first`): its first frame waits
for neither pydantic, the config nor the run's modules, so it is up within the budget
(docs/benchmarks.md, "The terminal app"). The config loads under the app, and a bad one
still ends in the CLI's one-line error and exit 1, the terminal left clean."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from app_driver import QUESTION, team_file
from tmux_terminal import start_massgen, start_python

from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import cooperative_agent

HERE = Path(__file__).parent
LOADED = 180  # seconds: the CLI starts slowly on a loaded 2-core machine
# What the first frame must not wait for: the config's validation, the run, a provider SDK.
HEAVY = (
    "pydantic",
    "massgen.config.loader",
    "massgen.config.schema",
    "massgen.runs.loading",
    "massgen.api",
    "openai",
)


def test_the_first_frame_comes_before_pydantic_the_config_and_the_run(tmp_path):
    team_file(tmp_path, "http://127.0.0.1:9/v1")  # never called: the probe exits first
    out = tmp_path / "modules.json"
    for display in (("--display", "tui"), ()):  # asked for, and the default on a terminal
        out.unlink(missing_ok=True)
        probe = (str(HERE / "first_frame_modules.py"), str(out))
        argv = ("--config", "team.yaml", "--no-logs", *display, QUESTION)
        with start_python(tmp_path, *probe, *argv) as term:
            assert term.exit_status(timeout=LOADED) == 0, term.history()
        loaded = json.loads(out.read_text())
        assert "massgen.ui.tui.app" in loaded  # the frame was the app's
        assert [name for name in HEAVY if name in loaded] == [], display


def test_a_bad_config_closes_the_app_with_the_clis_one_line_error(tmp_path):
    agent = {"id": "a", "backend": {"type": "chatcompletion", "model": "m", "temprature": 0.2}}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"agents": [agent]}))
    argv = ("--config", "bad.yaml", "--no-logs")
    plain = subprocess.run(
        [sys.executable, "-m", "massgen", *argv, "--display", "plain", QUESTION],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=LOADED,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert plain.returncode == 1
    error = plain.stderr.strip()
    assert error.startswith("massgen: error: bad.yaml") and "temprature" in error
    with start_massgen(tmp_path, *argv, QUESTION) as term:  # the app, then the config
        assert term.exit_status(timeout=LOADED) == 1
        assert term.settings_restored() and not term.in_alternate_screen()
        shown = term.history()
    assert error in shown
    assert "Traceback" not in shown


def test_the_predecessors_notes_are_printed_after_the_app_above_the_answer(tmp_path):
    with FakeProvider(cooperative_agent) as fake:
        path = team_file(tmp_path, fake.base_url)
        written = yaml.safe_load(path.read_text())
        written["orchestrator"] = {"snapshot_storage": "snapshots"}  # no effect here: a note
        path.write_text(yaml.safe_dump(written))
        with start_massgen(tmp_path, "--config", "team.yaml", QUESTION, height=36) as term:
            term.wait_for("done: q quits", timeout=LOADED)
            term.keys("q")
            assert term.exit_status(timeout=LOADED) == 0
            shown = term.history()
    after = shown.rsplit("done: q quits", 1)[-1]  # the normal screen, once the app closed
    note = "massgen: note: `orchestrator.snapshot_storage` has no effect here:"
    assert note in after
    assert after.index(note) < after.index("winner:")
