"""Interactive mode in a real terminal (tmux, or a pty), against the loopback fake.

Two turns where the second only makes sense with the first answer, a third interrupted
with Ctrl-C, `/quit`; then `--continue` picks the session up with both answers in its
history and Ctrl-D leaves. The terminal settings must be as they were before each run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from terminal import open_terminal

PROMPT = "massgen ›"


def script(folder: Path, name: str, *args: str) -> Path:
    path = folder / name
    path.write_text(
        "#!/bin/sh\n"
        f"cd '{folder}'\n"
        f"export HOME='{folder / 'home'}' TERM=xterm-256color\n"
        "unset NO_COLOR MASSGEN_LOG_BASE_DIR\n"
        "trap true INT\n"  # Ctrl-C is for massgen; the script itself carries on
        f"stty -g > {name}.stty_before\n"
        # The live view's chat; the app's (the default on a terminal): tests/ui/tui.
        f"'{sys.executable}' -m massgen --config team.yaml --display live {' '.join(args)}\n"
        'echo "massgen exited with $?"\n'
        f"stty -g > {name}.stty_after\n"
        "exec sleep 300\n"
    )
    path.chmod(0o755)
    return path


def at_prompt(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and lines[-1].strip().endswith(PROMPT)


def saved(turn: int) -> bool:
    return bool(list(Path(".massgen/sessions").glob(f"*/turn_{turn}/metadata.json")))


def ask(term, question: str, turn: int) -> None:
    term.type(question)
    term.wait_until(lambda _: saved(turn), f"turn {turn} saved")
    term.wait_until(at_prompt, f"the prompt after turn {turn}")


def same_terminal_settings(folder: Path, name: str) -> bool:
    before = (folder / f"{name}.stty_before").read_text()
    return before.strip() != "" and before == (folder / f"{name}.stty_after").read_text()


@pytest.fixture
def terminal_for(tmp_path):
    opened = []

    def start(path: Path):
        term = open_terminal(path)
        if term is None:
            pytest.skip("neither tmux nor a pseudo-terminal is available here")
        opened.append(term)
        return term

    yield start
    for term in opened:
        term.close()


def test_chat_in_a_real_terminal_then_continue(tmp_path, team, fake, terminal_for):
    term = terminal_for(script(tmp_path, "chat.sh"))
    term.wait_until(at_prompt, "the first prompt")
    assert "massgen chat · 3 agent(s): careful, balanced, creative" in term.text()

    ask(term, "What is 6 times 7?", 1)
    ask(term, "Add 8 to that.", 2)
    assert "6 times 7 is 42." in term.text() and "42 + 8 = 50." in term.text()

    term.type("slow: tell me everything")  # one agent stalls: the turn never ends alone
    term.wait_until(
        lambda _: list(Path(".massgen").glob("massgen_logs/*/turn_3/agent_*/answer_1.txt")),
        "a partial answer in turn 3",
    )
    term.wait_until(lambda text: "╭─ careful (agent" in text, "the live panels")
    term.key("C-c")
    term.wait_until(lambda text: "turn 3 cancelled; kept the best answer so far" in text, "cancel")
    term.wait_until(at_prompt, "the prompt after Ctrl-C")
    term.type("/quit")
    term.wait_until(lambda text: "massgen exited with 0" in text, "a clean exit")
    assert same_terminal_settings(tmp_path, "chat.sh")

    (session_dir,) = Path(".massgen/sessions").iterdir()
    turns = [
        json.loads((session_dir / f"turn_{n}" / "metadata.json").read_text()) for n in (1, 2, 3)
    ]
    assert [(t["question"], t["status"]) for t in turns] == [
        ("What is 6 times 7?", "ok"),
        ("Add 8 to that.", "ok"),
        ("slow: tell me everything", "interrupted"),
    ]
    assert turns[1]["answer"] == "42 + 8 = 50." and turns[2]["answer"]
    assert "Q: Add 8 to that.\nA: 42 + 8 = 50." in (session_dir / "SESSION_SUMMARY.txt").read_text()

    again = terminal_for(script(tmp_path, "continue.sh", "--continue"))
    again.wait_until(at_prompt, "the prompt of the resumed chat")
    assert f"resumed session {session_dir.name} with 3 earlier turn(s):" in again.text()
    ask(again, "Do you remember both earlier questions?", 4)
    assert "I remember 2 earlier question(s): 6 times 7, Add 8." in again.text()
    again.key("C-d")
    again.wait_until(lambda text: "massgen exited with 0" in text, "Ctrl-D leaves")
    assert same_terminal_settings(tmp_path, "continue.sh")
    assert os.path.exists(session_dir / "turn_4" / "answer.txt")
