"""The app's x stops one agent (after asking, the pointer on keeping it), the team going
on without it; y copies and w saves the final answer (never over a file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_driver import SIZE, agent_entries, new_view, quit_with_q, team_file, team_run, until
from textual.pilot import Pilot

from massgen.core.status import Status
from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import Fault, Reply, cooperative_agent
from massgen.ui.tui.steering import SaveDialog, StopDialog

pytestmark = pytest.mark.usefixtures("in_tmp")

TEAM = ("careful", "balanced", "slow")


def slow_never_answers(request):
    if request["model"] == "slow":
        return Reply(fault=Fault(stall_seconds=60))
    return cooperative_agent(request)


def entry(app, agent: str) -> str:
    return next(e for e in agent_entries(app) if e.startswith(f"{agent} ("))


async def test_x_stops_the_selected_agent_and_the_team_decides_without_it(tmp_path):
    view = new_view(TEAM)
    app = view.app
    seen: dict[str, str] = {}

    async def user(pilot: Pilot) -> None:
        state = view.model.state
        await until(lambda: state.agent("careful").answers and state.agent("balanced").answers,
                    "the two first answers")  # fmt: skip
        await pilot.press("3")  # slow
        # Enter alone keeps it working: the pointer starts there.
        await pilot.press("x")
        await until(lambda: isinstance(app.screen, StopDialog), "the stop dialog")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert state.agent("slow").status != "failed" and not app.over
        await pilot.press("x")
        await until(lambda: isinstance(app.screen, StopDialog), "the stop dialog")
        await pilot.press("up", "enter")
        await until(lambda: app.over, "the run's end without slow")
        await pilot.pause()
        seen["slow"] = entry(app, "slow")
        quit_with_q(pilot)

    with FakeProvider(slow_never_answers) as fake:
        turn = team_run(team_file(tmp_path, fake.base_url, TEAM), view)
        result = await view.drive(turn.execute(), headless=True, size=SIZE, auto_pilot=user)
    assert result.answer and result.winner in ("careful", "balanced")
    assert result.status is Status.DEGRADED  # it ran with fewer agents than it has
    assert "stopped by you" in seen["slow"] and "failed" not in seen["slow"]


async def test_y_copies_and_w_saves_the_final_answer_never_over_a_file(tmp_path):
    view = new_view()
    app = view.app
    app.save_dir = tmp_path / "out"
    app.save_dir.mkdir()
    (app.save_dir / "massgen-answer.md").write_text("kept\n")  # someone's file
    early: list[str] = []

    async def user(pilot: Pilot) -> None:
        await pilot.press("w")  # nothing to save yet: a toast, no dialog
        early.append(type(app.screen).__name__)
        await until(lambda: app.over, "the run's end")
        await pilot.press("y")
        await pilot.press("w")
        await until(lambda: isinstance(app.screen, SaveDialog), "the save dialog")
        await pilot.press("enter")
        await until(lambda: not isinstance(app.screen, SaveDialog), "the dialog closed")
        quit_with_q(pilot)

    with FakeProvider(cooperative_agent) as fake:
        turn = team_run(team_file(tmp_path, fake.base_url), view)
        result = await view.drive(turn.execute(), headless=True, size=SIZE, auto_pilot=user)
    assert early == ["Screen"]
    assert app.clipboard == result.answer
    assert (app.save_dir / "massgen-answer.md").read_text() == "kept\n"
    saved = Path(app.save_dir / "massgen-answer-2.md").read_text()
    assert saved.strip() == result.answer.strip()
