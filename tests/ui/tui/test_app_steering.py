"""Steering from the app: q after the run prints the final answer to the normal screen;
Ctrl-C stops the run keeping what was decided (and a second leaves at once); a
permission ask is a dialog over the app, which keeps drawing behind it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from app_driver import (
    SIZE,
    agent_entries,
    new_view,
    plain,
    quit_with_q,
    team_file,
    team_run,
    text_of,
    until,
)
from asks import git_push
from run_events import coordination
from textual.pilot import Pilot

from massgen.core import events as ev
from massgen.core.effects import Write
from massgen.core.status import Status
from massgen.permissions.approval import Choice
from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import Fault, Reply, cooperative_agent
from massgen.ui.tui.approval import AppApprover, ApprovalDialog
from massgen.ui.tui.view import TuiView

pytestmark = pytest.mark.usefixtures("in_tmp")

PUSH = git_push(Write(Path("/w/notes.md")))


def stalls_after_answering(request):
    """Every agent answers, then the model named "slow" stalls: a run to stop midway."""
    if request["model"] == "slow" and "[slow answer 1]" in str(request["messages"]):
        return Reply(fault=Fault(stall_seconds=60))
    return cooperative_agent(request)


async def test_q_after_the_run_prints_the_final_answer(tmp_path, capsys):
    view = new_view()

    async def user(pilot: Pilot) -> None:
        await until(lambda: view.app.over, "the run's end")
        quit_with_q(pilot)

    with FakeProvider(cooperative_agent) as fake:
        turn = team_run(team_file(tmp_path, fake.base_url), view)
        result = await view.drive(turn.execute(), headless=True, size=SIZE, auto_pilot=user)
    printed = capsys.readouterr().out
    assert result.status is Status.OK
    assert f"winner: {result.winner}" in printed and "agreement:" in printed
    words = " ".join(printed.split())  # wrapped to the terminal's width
    assert words.endswith(f"{result.answer} ─" + words.rsplit(f"{result.answer} ─", 1)[1])
    view.close()  # the CLI's close: printed once only
    assert capsys.readouterr().out == ""


async def test_q_while_the_team_works_does_not_quit(tmp_path):
    view = new_view(("careful", "slow"))
    with FakeProvider(stalls_after_answering) as fake:
        turn = team_run(team_file(tmp_path, fake.base_url, ("careful", "slow")), view)
        async with view.app.run_test(size=SIZE) as pilot:
            task = asyncio.create_task(turn.execute())
            await until(lambda: view.model.state.agent("slow").answers, "slow's answer")
            await pilot.press("q")
            await pilot.pause()
            assert view.app.is_running and not task.done()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def test_ctrl_c_stops_the_run_keeping_what_was_decided(tmp_path, capsys):
    view = new_view(("careful", "slow"))
    seen: dict[str, str] = {}

    async def user(pilot: Pilot) -> None:
        await until(lambda: view.model.state.agent("slow").answers, "slow's answer")
        await pilot.press("ctrl+c")
        await until(lambda: view.app.over, "the stopped run's end")
        await pilot.pause()
        seen["outcome"] = text_of(view.app, "#outcome")
        seen["status"] = text_of(view.app, "#status")
        seen["slow"] = next(e for e in agent_entries(view.app) if e.startswith("slow ("))
        quit_with_q(pilot)

    with FakeProvider(stalls_after_answering) as fake:
        turn = team_run(team_file(tmp_path, fake.base_url, ("careful", "slow")), view)
        with pytest.raises(KeyboardInterrupt):
            await view.drive(turn.execute(), headless=True, size=SIZE, auto_pilot=user)
    finished = view.model.state.finished
    assert finished is not None and finished.status is Status.INTERRUPTED
    assert "best answer so far" in seen["outcome"] and "interrupted" in seen["outcome"]
    slow = seen["slow"]  # its own entry: the list may order the agents otherwise
    assert "answered agent" in slow and "voted" not in slow  # stopped before its vote
    # And the kept answer reaches the normal screen, as with the live view.
    printed = capsys.readouterr().out
    assert "best answer so far" in printed and finished.answer.strip() in printed


async def test_a_second_ctrl_c_leaves_at_once(tmp_path, monkeypatch):
    view = new_view(("careful", "slow"))
    left: list[bool] = []
    monkeypatch.setattr("massgen.runs.interrupts.exit_now", lambda: left.append(True))

    def never_ends(request):  # every call stalls: the first Ctrl-C's cleanup is slow
        return Reply(fault=Fault(stall_seconds=60))

    async def user(pilot: Pilot) -> None:
        await until(lambda: view.model.state.agents, "the run's start")
        view.app.stop_run = lambda: None  # the cancellation has not landed yet
        await pilot.press("ctrl+c")
        await pilot.press("ctrl+c")

    with FakeProvider(never_ends) as fake:
        turn = team_run(team_file(tmp_path, fake.base_url, ("careful", "slow")), view)
        task = asyncio.create_task(
            view.drive(turn.execute(), headless=True, size=SIZE, auto_pilot=user)
        )
        await until(lambda: left, "exit_now after the app closed")
        assert not view.app.is_running  # the terminal was given back first
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_permission_ask_is_a_dialog_and_the_app_keeps_drawing():
    view = TuiView()
    app = view.app
    approver = view.approver
    assert isinstance(approver, AppApprover) and approver.operator == "human"
    async with app.run_test(size=SIZE) as pilot:
        events = coordination()
        for event in events[:4]:
            view(event)
        asked = asyncio.create_task(approver.ask(PUSH))
        # Shown and composed: on a loaded machine the poll can fall between the two.
        await until(
            lambda: isinstance(app.screen, ApprovalDialog) and app.screen.query("#choices"),
            "the dialog",
        )
        dialog = app.screen
        shown = "\n".join(plain(s.content) for s in dialog.query("Static"))
        assert "execute_command" in shown and "git push origin" in shown and "high" in shown
        # Behind the dialog, the run goes on: an answer arrives and the list shows it.
        for event in events[4:]:
            view(event)
        await pilot.pause(0.3)
        assert any("answered agent1.1" in entry for entry in agent_entries(app))
        # The pointer starts on deny: one Up is "always allow".
        await pilot.press("up", "enter")
        assert await asyncio.wait_for(asked, 5) is Choice.ALWAYS
        # Enter alone denies; so does Escape.
        for keys in (("enter",), ("escape",)):
            asked = asyncio.create_task(approver.ask(PUSH))
            await until(lambda: isinstance(app.screen, ApprovalDialog), "the dialog")
            await pilot.press(*keys)
            assert await asyncio.wait_for(asked, 5) is Choice.DENY


async def test_no_answer_in_time_denies_and_takes_the_dialog_down():
    view = TuiView()
    view.approver.timeout = 0.3
    async with view.app.run_test(size=SIZE) as pilot:
        assert await view.approver.ask(PUSH) is Choice.DENY
        await pilot.pause(0.2)
        assert not isinstance(view.app.screen, ApprovalDialog)


async def test_ctrl_c_at_the_dialog_denies_then_stops_the_run():
    view = TuiView()
    stopped: list[bool] = []
    view.app.stop_run = lambda: stopped.append(True)
    async with view.app.run_test(size=SIZE) as pilot:
        view(ev.RunStarted(question="q", agents=("careful",), labels={"careful": "agent1"}))
        asked = asyncio.create_task(view.approver.ask(PUSH))
        await until(lambda: isinstance(view.app.screen, ApprovalDialog), "the dialog")
        await pilot.press("ctrl+c")
        assert await asyncio.wait_for(asked, 5) is Choice.DENY
        assert stopped == [True]
