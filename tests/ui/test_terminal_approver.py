"""The live view's approver with the real questionary prompt, its keys from a pipe.

What a person sees before answering, that each answer comes back as its Choice, that the
panels stop while the prompt shows and come back after, and the ways an ask ends in a deny
(Ctrl-C, no answer in time). The same in a real terminal: test_approval_tmux.py.
"""

from __future__ import annotations

import asyncio
import io
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from asks import git_push
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from run_events import coordination

from massgen.core.effects import Delete, External, Net, Read, Run, Write
from massgen.permissions.approval import ApprovalRequest, Choice
from massgen.permissions.describe import effect_text
from massgen.ui.approval import TerminalApprover, _interrupt_run, terminal_approver
from massgen.ui.choice import approver_for
from massgen.ui.live import LiveView

UP, ENTER, CTRL_C = "\x1b[A", "\r", "\x03"
PUSH = git_push(Write(Path("/w/a\nb\x1b[2J")))


@pytest.fixture
def keys():
    """Key presses for the prompt, as a terminal would deliver them."""
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        yield pipe.send_text


@pytest.fixture
def screen() -> io.StringIO:
    return io.StringIO()


def live_view(screen: io.StringIO) -> LiveView:
    view = LiveView(Console(file=screen, force_terminal=True, width=100, height=30))
    for event in coordination():
        view(event)
    return view


async def until(check: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    ("typed", "choice"),
    [
        (UP * 3 + ENTER, Choice.ONCE),
        (UP * 2 + ENTER, Choice.SESSION),
        (UP + ENTER, Choice.ALWAYS),
        (ENTER, Choice.DENY),  # the pointer starts on deny: a stray Enter never allows
    ],
)
async def test_each_answer_is_its_choice(keys, screen, typed, choice):
    view = live_view(screen)
    asked = asyncio.create_task(TerminalApprover(view).ask(PUSH))
    await until(lambda: "permission asked" in screen.getvalue(), "the prompt")
    keys(typed)
    assert await asked is choice
    view.close()


async def test_an_error_elsewhere_on_the_loop_does_not_take_the_answer(keys, screen):
    """prompt_toolkit's own handler would show it and wait for Enter, eating the answer."""
    view = live_view(screen)
    asked = asyncio.create_task(TerminalApprover(view).ask(PUSH))
    await until(lambda: "permission asked" in screen.getvalue(), "the prompt")
    loop = asyncio.get_running_loop()
    loop.call_soon(lambda: loop.call_exception_handler({"message": "a client closed late"}))
    await asyncio.sleep(0.05)
    keys(UP * 3 + ENTER)
    async with asyncio.timeout(5):
        assert await asked is Choice.ONCE
    view.close()


async def test_the_prompt_shows_who_wants_to_do_what(keys, screen):
    view = live_view(screen)
    asked = asyncio.create_task(TerminalApprover(view).ask(PUSH))
    await until(lambda: "permission asked" in screen.getvalue(), "the prompt")
    keys(ENTER)
    await asked
    view.close()
    shown = screen.getvalue()
    for line in [
        "agent   careful (agent1)",
        "tool    execute_command",
        "effect  run: git push origin (in /w)",
        "        write /w/a\\nb\\x1b[2J",  # a hostile file name cannot redraw the screen
        "risk    high",
        "reason  commands not known to be safe are asked",
    ]:
        assert line in _plain(shown), line


async def test_the_panels_pause_for_the_prompt_and_come_back(keys, screen):
    view = live_view(screen)
    assert view._live is not None
    asked = asyncio.create_task(TerminalApprover(view).ask(PUSH))
    await until(lambda: "permission asked" in screen.getvalue(), "the prompt")
    assert view._live is None  # nothing draws over the prompt
    frames = view.frames
    view(coordination()[-1])  # events still arrive while the person reads
    keys(ENTER)
    await asked
    assert view._live is not None and view.frames > frames
    view.close()


async def test_asks_take_turns(keys, screen):
    view = live_view(screen)
    approver = TerminalApprover(view)
    other = _as(PUSH, agent="balanced")
    first = asyncio.create_task(approver.ask(PUSH))
    second = asyncio.create_task(approver.ask(other))
    await until(lambda: screen.getvalue().count("permission asked") == 1, "the first prompt")
    await asyncio.sleep(0.1)
    assert screen.getvalue().count("permission asked") == 1  # the second waits
    keys(UP + ENTER)
    assert await first is Choice.ALWAYS
    await until(lambda: screen.getvalue().count("permission asked") == 2, "the second prompt")
    assert "balanced (agent2)" in _plain(screen.getvalue())
    keys(ENTER)
    assert await second is Choice.DENY
    view.close()


async def test_ctrl_c_denies_and_interrupts_the_run(keys, screen):
    interrupted: list[bool] = []
    view = live_view(screen)
    approver = TerminalApprover(view, on_interrupt=lambda: interrupted.append(True))
    asked = asyncio.create_task(approver.ask(PUSH))
    await until(lambda: "permission asked" in screen.getvalue(), "the prompt")
    keys(UP + CTRL_C)
    assert await asked is Choice.DENY
    assert interrupted == [True]
    assert "denied (Ctrl-C)" in screen.getvalue()
    view.close()


async def test_no_answer_in_time_is_a_deny(keys, screen):
    view = live_view(screen)
    assert await TerminalApprover(view, timeout_seconds=0.2).ask(PUSH) is Choice.DENY
    assert "no answer within 0.2s: denied" in screen.getvalue()
    assert view._live is not None
    view.close()


async def test_a_cancelled_ask_gives_the_panels_back(keys, screen):
    """The engine's own timeout, or the run ending, cancels the ask: the prompt goes, the
    panels come back, the next ask gets the terminal."""
    view = live_view(screen)
    approver = TerminalApprover(view)
    asked = asyncio.create_task(approver.ask(PUSH))
    await until(lambda: "permission asked" in screen.getvalue(), "the prompt")
    asked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asked
    assert view._live is not None
    again = asyncio.create_task(approver.ask(PUSH))
    await until(lambda: screen.getvalue().count("permission asked") == 2, "the next prompt")
    keys(UP + ENTER)
    assert await again is Choice.ALWAYS
    view.close()


async def test_an_unknown_agent_gets_no_panel(keys, screen):
    view = live_view(screen)
    asked = asyncio.create_task(TerminalApprover(view).ask(_as(PUSH, agent="stranger")))
    await until(lambda: "permission asked" in screen.getvalue(), "the prompt")
    keys(ENTER)
    await asked
    assert "stranger" not in view.model.agents
    view.close()


def test_only_a_live_view_on_a_terminal_gets_one(monkeypatch):
    from massgen.ui.plain import PlainView

    assert terminal_approver(PlainView()) is None
    assert approver_for(PlainView()) is None
    assert terminal_approver(LiveView(Console(file=io.StringIO()))) is None  # pytest's stdin
    monkeypatch.setattr("sys.stdin", _Tty())
    monkeypatch.setattr("sys.stdout", _Tty())
    assert isinstance(approver_for(LiveView(Console(file=io.StringIO()))), TerminalApprover)
    assert approver_for(PlainView()) is None


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_default_interrupt_is_the_sigint_a_run_handles():
    """Ctrl-C at the prompt was a key, not a signal: the approver sends the SIGINT, so the
    handler the run installed (a chat's turn, asyncio.run's) cancels as for any Ctrl-C."""
    loop = asyncio.get_running_loop()
    handled = asyncio.Event()
    loop.add_signal_handler(signal.SIGINT, handled.set)
    try:
        _interrupt_run()
        await asyncio.wait_for(handled.wait(), 5)
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def test_effects_in_words():
    assert effect_text(Read(Path("/a"))) == "read /a"
    assert effect_text(Write(Path("/a"))) == "write /a"
    assert effect_text(Delete(Path("/a"))) == "delete /a"
    assert effect_text(Run(("rm", "-r", "my dir"), Path("/w"))) == "run: rm -r 'my dir' (in /w)"
    assert effect_text(Net("example.com")) == "connect to example.com"
    assert effect_text(External("time", "get_time")) == "call mcp tool time/get_time"
    assert len(effect_text(Write(Path("/" + "x" * 1000)))) == 300


def _as(request: ApprovalRequest, **changes: object) -> ApprovalRequest:
    from dataclasses import replace

    return replace(request, **changes)  # type: ignore[arg-type]


def _plain(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
