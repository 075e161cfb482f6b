"""An ask in the live view, answered in a real terminal (tmux) with each choice.

The driver (approval_driver.py) runs the real LiveView and TerminalApprover; the test
presses the keys a person would. Each round: the prompt shows who wants to do what, the
answer comes back as its Choice, and the panels are drawn again afterwards. The last round
is Ctrl-C: a deny, then the run is interrupted as any Ctrl-C interrupts it.
"""

from __future__ import annotations

from pathlib import Path

from tmux_terminal import require_tmux, start_python

DRIVER = Path(__file__).with_name("approval_driver.py")
# From the pointer's start on "deny": how to reach each answer.
ROUNDS = [
    (("Up", "Up", "Up", "Enter"), "once"),
    (("Up", "Up", "Enter"), "session"),
    (("Up", "Enter"), "always"),
    (("Enter",), "deny"),
]


def choices(folder: Path) -> list[str]:
    path = folder / "choices.txt"
    return path.read_text().split() if path.exists() else []


def shows_prompt(round_: int):
    return lambda screen: f"round {round_}:" in screen and "Allow this call?" in screen


def test_each_choice_in_a_real_terminal(tmp_path):
    require_tmux()
    with start_python(tmp_path, str(DRIVER), str(tmp_path), str(len(ROUNDS) + 1)) as term:
        for round_, (keys, expected) in enumerate(ROUNDS, start=1):
            screen = term.wait_until(shows_prompt(round_), f"prompt {round_}")
            for shown in [
                "permission asked",
                "agent   careful (agent1)",
                "tool    execute_command",
                "effect  run: git push origin (in /work/space)",
                "        write /etc/hosts",
                "risk    high",
            ]:
                assert shown in screen, f"{shown!r} not in:\n{screen}"
            assert "╭" not in screen  # the panels stopped drawing over the prompt
            term.keys(*keys)
            term.wait_until(lambda _, n=round_: len(choices(tmp_path)) == n, f"answer {round_}")
            assert choices(tmp_path)[-1] == expected
            # The view is back: the header, the panels, and text that arrived after the ask.
            term.wait_for("massgen · What is the capital", "╭", f"resumed-{round_}")
            (tmp_path / f"go_{round_}").touch()

        term.wait_until(shows_prompt(len(ROUNDS) + 1), "the last prompt")
        term.keys("C-c")
        assert term.exit_status(timeout=30) == 130
        assert term.settings_restored()  # the prompt left raw mode behind it
    assert choices(tmp_path)[-2:] == ["deny", "interrupted"]


def test_keys_typed_before_the_prompt_are_not_an_answer(tmp_path):
    """Keys pressed while the panels drew must not reach the prompt: an Up typed ahead
    plus the person's Up Up Up would wrap round to "deny"; dropped, the answer is "once"."""
    require_tmux()
    with start_python(tmp_path, str(DRIVER), str(tmp_path), "1", "--hold") as term:
        term.wait_for("before-ask-1")
        term.keys("Up")  # typed ahead, while the panels are drawing
        (tmp_path / "ask_1").touch()
        term.wait_until(shows_prompt(1), "the prompt")
        term.keys("Up", "Up", "Up", "Enter")
        term.wait_until(lambda _: choices(tmp_path) != [], "the answer")
        assert choices(tmp_path) == ["once"]
        (tmp_path / "go_1").touch()
        (tmp_path / "stop").touch()
        assert term.exit_status(timeout=30) == 0
        assert term.settings_restored()
