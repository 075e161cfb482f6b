"""Which display a run gets: the app on a terminal (stdin and stdout), the live view when
only stdout is one, plain text in a pipe; flags and the config's `ui.display_type` pick."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
import yaml

from massgen.testing.fake_provider import FakeProvider
from massgen.ui.choice import display_for


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


TTY, PIPE = Terminal, io.StringIO


@pytest.mark.parametrize(
    ("stdin", "stdout", "shown"),
    [(TTY, TTY, "tui"), (PIPE, TTY, "live"), (TTY, PIPE, "plain"), (PIPE, PIPE, "plain")],
    ids=["terminal", "keys-piped", "output-piped", "pipes"],
)
def test_the_default_follows_the_terminal(stdin, stdout, shown):
    assert display_for(None, stdin=stdin(), stdout=stdout(), env={}) == shown


@pytest.mark.parametrize(
    ("requested", "configured", "no_display", "shown"),
    [
        ("live", None, False, "live"),
        ("plain", None, False, "plain"),
        ("tui", "rich_terminal", False, "tui"),  # the flag over the file
        (None, "rich_terminal", False, "live"),
        (None, "textual_terminal", False, "tui"),
        (None, "simple", False, "plain"),
        (None, "silent", False, "silent"),
        ("tui", None, True, "plain"),  # --no-display means plain whatever else asks
    ],
)
def test_flags_and_the_config_choose(requested, configured, no_display, shown):
    chosen = display_for(
        requested, configured=configured, no_display=no_display, stdin=TTY(), stdout=TTY(), env={}
    )
    assert chosen == shown


def test_a_terminal_that_wants_no_colour_gets_plain_text_unless_asked():
    for env in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        assert display_for(None, stdin=TTY(), stdout=TTY(), env=env) == "plain"
        assert display_for("tui", stdin=TTY(), stdout=TTY(), env=env) == "tui"


def test_no_terminal_no_app_whatever_is_asked():
    assert display_for("tui", stdin=PIPE(), stdout=PIPE(), env={}) == "plain"
    assert display_for("tui", stdin=PIPE(), stdout=TTY(), env={}) == "live"


def test_streamed_events_never_load_the_app(tmp_path):
    # `--stream-events` and `--automation` print lines for programs: no app, no Textual.
    probe = (
        "import json, sys\nfrom massgen.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(json.dumps([code, sorted(m for m in sys.modules if 'textual' in m)]))"
    )
    with FakeProvider() as fake:
        agent = {
            "id": "a",
            "backend": {"type": "chatcompletion", "model": "m", "base_url": fake.base_url},
        }
        (tmp_path / "team.yaml").write_text(yaml.safe_dump({"agents": [agent]}))
        for flag in ("--stream-events", "--automation"):
            argv = ["--config", "team.yaml", flag, "--no-logs", "q"]
            done = subprocess.run(
                [sys.executable, "-c", probe, *argv],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "HOME": str(tmp_path)},
            )
            assert json.loads(done.stdout.splitlines()[-1]) == [0, []], done.stderr


def test_the_configs_default_display_type_names_no_choice():
    from massgen.config.schema import UIConfig

    terminal = {"stdin": TTY(), "stdout": TTY(), "env": {}}
    assert display_for(None, ui=UIConfig(), **terminal) == "tui"
    assert display_for(None, ui=UIConfig(display_type="rich_terminal"), **terminal) == "live"


@pytest.mark.parametrize(
    ("written", "flags", "first"),
    [
        ({}, (), True),
        ({"ui": {"logging_enabled": False}}, (), True),
        ({"ui": {"display_type": "textual_terminal"}}, (), True),
        ({"ui": {"display_type": "rich_terminal"}}, (), False),  # the live view, as loaded
        ({"ui": {"display_type": "silent"}}, (), False),
        ({"ui": {"type": "textual_terminal"}}, (), False),  # the predecessor's: load to know
        ({"display": {"type": "rich_terminal"}}, (), False),
        ({"ui": {"display_type": "rich_terminal"}}, ("--display", "tui"), True),
        ({}, ("--display", "live"), False),
        ({}, ("--automation",), False),
        ({}, ("--stream-events",), False),
        ({}, ("--no-display",), False),
    ],
)
def test_the_app_opens_before_the_config_loads_only_when_flags_and_file_say_app(
    tmp_path, written, flags, first
):
    from massgen.cli import build_parser
    from massgen.cli_output import app_first

    agents = [{"id": "a", "backend": {"type": "chatcompletion", "model": "m"}}]
    (tmp_path / "team.yaml").write_text(yaml.safe_dump({"agents": agents, **written}))
    args = build_parser().parse_args(["--config", str(tmp_path / "team.yaml"), *flags, "q"])
    assert app_first(args, stdin=TTY(), stdout=TTY(), env={}) is first


def test_a_config_that_cannot_be_read_is_loaded_first_to_say_why(tmp_path):
    from massgen.cli import build_parser
    from massgen.cli_output import app_first

    (tmp_path / "broken.yaml").write_text("agents: [\n")
    configs = (tmp_path / "broken.yaml", tmp_path / "missing.yaml", "@examples/no_such_example")
    for config in configs:
        args = build_parser().parse_args(["--config", str(config), "q"])
        assert app_first(args, stdin=TTY(), stdout=TTY(), env={}) is False, config
