"""Done-when (#14): `massgen` in a real terminal (tmux), on the loopback fake, asks before an
agent's command runs; each of the four answers is honoured and recorded.

The agent's model runs `touch made_by_agent.txt` in its workspace: a command not known to
be safe, so the engine asks the person at the terminal. Per answer:

- once:    the command runs; the same command again is asked again (here: denied).
- session: the command runs; the same command again in this run is not asked.
- always:  the command runs, `.massgen/settings.local.json` holds the allow rule, and a new
           run runs it without asking.
- deny:    nothing runs.

Every decision is in `<log_dir>/permissions.jsonl`; an answered one with operator "human".
A signal (Ctrl-C, SIGTERM) while the prompt is open ends the run with exit 4, the ask
recorded as a deny, the resume hint printed and no process left behind.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import yaml
from process_checks import alive
from tmux_terminal import TmuxTerminal, require_tmux, start_massgen

from massgen.permissions.ledger import read
from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import Reply, cooperative_agent

COMMAND = "touch made_by_agent.txt"
MADE = "made_by_agent.txt"
QUESTION = "Leave a mark in your workspace."
# From the pointer's start on "deny": the keys that reach each answer.
KEYS = {
    "once": ("Up", "Up", "Up", "Enter"),
    "session": ("Up", "Up", "Enter"),
    "always": ("Up", "Enter"),
    "deny": ("Enter",),
}
PROMPT = "Allow this call?"


class RunsTheCommand:
    """The model calls `COMMAND` `times` times, one call per turn (each after the previous
    call's result came back), then behaves as a cooperative agent."""

    def __init__(self, times: int) -> None:
        self.left = times
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Reply:
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        with self._lock:
            call = "execute_command" in offered and "new_answer" in offered and self.left > 0
            self.left -= call
        if call:
            return Reply(tool_calls=[("execute_command", {"command": COMMAND})])
        return cooperative_agent(request)


def write_team(folder: Path, base_url: str, **orchestrator: object) -> None:
    backend = {"type": "chatcompletion", "model": "m1", "base_url": base_url, "api_key": "k",
               "cwd": "ws", "enable_mcp_command_line": True}  # fmt: skip
    config = {"agents": [{"id": "careful", "backend": backend}],
              "orchestrator": {"max_new_answers_per_agent": 1, **orchestrator}}  # fmt: skip
    (folder / "team.yaml").write_text(yaml.safe_dump(config))


def made(folder: Path) -> list[Path]:
    return list((folder / ".massgen" / "workspaces").rglob(MADE))


def ledgers(folder: Path) -> list[Path]:
    return sorted((folder / ".massgen" / "massgen_logs").glob("log_*/turn_*/permissions.jsonl"))


def commands(ledger: Path) -> list[dict]:
    return [r for r in read(ledger) if r["tool"] == "execute_command"]


def wait_for_prompt(term: TmuxTerminal, nth: int = 1) -> str:
    """The screen once the `nth` ask of the run is on it, waiting for its answer (the
    pointer on "deny" is shown only while a prompt is open)."""
    term.wait_until(lambda text: text.count("permission asked") >= nth, f"ask {nth}",
                    timeout=60, scrollback=True)  # fmt: skip
    return term.wait_for("permission asked", PROMPT, "» deny", timeout=60)


def answer_the_prompt(term: TmuxTerminal, choice: str, nth: int = 1) -> None:
    screen = wait_for_prompt(term, nth)
    for shown in ["agent", "careful", "tool    execute_command", "effect  run: /bin/sh -c 'touch made_by_agent.txt'", "risk    medium"]:  # fmt: skip
        assert shown in screen, f"{shown!r} not in:\n{screen}"
    term.keys(*KEYS[choice])


def run_to_the_end(term: TmuxTerminal) -> str:
    term.wait_for("winner:", scrollback=True, timeout=60)
    assert term.exit_status(timeout=60) == 0
    assert term.settings_restored()
    return term.history()


def start(folder: Path) -> TmuxTerminal:
    # The live view's prompt (the app's dialogs are tests/ui/tui/).
    return start_massgen(folder, "--display", "live", "--config", "team.yaml", QUESTION)


def run_answering(folder: Path, times: int, *choices: str) -> str:
    """A live run whose model runs the command `times` times, its prompts answered with
    `choices` in turn; what the terminal showed by the end."""
    with FakeProvider(RunsTheCommand(times=times)) as fake:
        write_team(folder, fake.base_url)
        with start(folder) as term:
            for nth, choice in enumerate(choices, 1):
                answer_the_prompt(term, choice, nth=nth)
            return run_to_the_end(term)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    require_tmux()
    return tmp_path


def test_allow_once_runs_the_command_and_asks_again(folder):
    # The same call twice: asked again, because "once" was for one call.
    run_answering(folder, 2, "once", "deny")
    first, second = commands(ledgers(folder)[0])
    assert (first["decision"], first["operator"], first["choice"]) == ("allow", "human", "once")
    assert (second["decision"], second["operator"], second["choice"]) == ("deny", "human", "deny")
    assert first["effects"][0] == second["effects"][0] == "run `touch made_by_agent.txt`"
    assert len(made(folder)) == 1


def test_allow_for_the_session_is_not_asked_again_in_that_run(folder):
    shown = run_answering(folder, 2, "session")
    assert shown.count(PROMPT) == 1
    first, second = commands(ledgers(folder)[0])
    assert (first["decision"], first["operator"], first["choice"]) == ("allow", "human", "session")
    assert (second["decision"], second["operator"], second["rule"]) == ("allow", "rule", "session grant")  # fmt: skip
    assert len(made(folder)) == 1
    assert not (folder / ".massgen" / "settings.local.json").exists()  # nothing saved


def test_always_allow_is_saved_and_a_new_run_does_not_ask(folder):
    run_answering(folder, 1, "always")
    [record] = commands(ledgers(folder)[0])
    assert (record["decision"], record["operator"], record["choice"]) == ("allow", "human", "always")  # fmt: skip
    saved = json.loads((folder / ".massgen" / "settings.local.json").read_text())
    rules = saved["permissions"]["allow"]
    assert any("touch made_by_agent.txt" in rule for rule in rules), rules
    for path in made(folder):
        path.unlink()

    shown = run_answering(folder, 1)
    assert PROMPT not in shown
    [again] = commands(ledgers(folder)[1])
    assert (again["decision"], again["operator"]) == ("allow", "rule")
    assert again["rule"] in rules
    assert len(made(folder)) == 1


def test_deny_runs_nothing(folder):
    run_answering(folder, 1, "deny")
    [record] = commands(ledgers(folder)[0])
    assert (record["decision"], record["operator"], record["choice"]) == ("deny", "human", "deny")
    assert made(folder) == []


def test_a_person_slower_than_the_tool_timeout_still_runs_the_command(folder):
    """The time to answer is not the tool's: with a 1 s tool timeout, an answer after 2 s
    still runs the command."""
    with FakeProvider(RunsTheCommand(times=1)) as fake:
        write_team(folder, fake.base_url, tool_timeout_seconds=1)
        with start(folder) as term:
            wait_for_prompt(term)
            time.sleep(2)  # the person thinks it over: longer than the tool may take
            term.keys(*KEYS["once"])
            run_to_the_end(term)
    [record] = commands(ledgers(folder)[0])
    assert (record["decision"], record["choice"]) == ("allow", "once")
    assert len(made(folder)) == 1


# --- a signal while the prompt is open ----------------------------------------------------


def massgen_pid() -> int:
    """The pid of the `python -m massgen` under test: the process whose argv holds the
    question as one word (the pane's shell holds it inside its one `-c` script)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if QUESTION.encode() in argv and b"massgen" in argv:
                return int(entry.name)
    raise AssertionError("the massgen process is not running")


def descendants(pid: int) -> set[int]:
    """Every process below `pid` now (children, their children, ...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def all_gone(pids: set[int], within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


@pytest.mark.parametrize("how", ["Ctrl-C", "SIGTERM"])
def test_a_signal_at_the_prompt_ends_the_run_as_interrupted_with_the_ask_denied(folder, how):
    with FakeProvider(RunsTheCommand(times=1)) as fake:
        write_team(folder, fake.base_url)
        with start(folder) as term:
            wait_for_prompt(term)
            pid = massgen_pid()
            below = descendants(pid)
            if how == "Ctrl-C":
                term.keys("C-c")
            else:
                os.kill(pid, signal.SIGTERM)
            assert term.exit_status(timeout=60) == 4
            assert term.settings_restored()
            shown = term.history()
    [ledger] = ledgers(folder)
    assert f"resume with: massgen --resume {ledger.parent}" in shown
    assert "Traceback" not in shown
    [record] = commands(ledger)
    assert record["decision"] == "deny"
    if how == "Ctrl-C":  # the person's answer; SIGTERM cancels the ask unanswered
        assert (record["operator"], record["choice"]) == ("human", "deny")
    assert made(folder) == []
    assert all_gone(below | {pid}), [p for p in below if alive(p)]
