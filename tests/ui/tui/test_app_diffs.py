"""The answers board shows what each answer changed in its agent's workspace: the files,
and the diff in a fold of its own, from a real run whose agents write files."""

from __future__ import annotations

import pytest
from app_driver import QUESTION, SIZE, fold_text, folds, new_view, until
from textual.widgets import Collapsible, Static, TabbedContent

from massgen.api import TeamRun
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.testing.teams import workspace_agents
from massgen.ui.tui.view import run_turn

pytestmark = pytest.mark.usefixtures("in_tmp")
IDS = ("careful", "balanced", "creative")


def writer(request: dict) -> Reply:
    """Write a file before the first answer; vote as the cooperative agent does."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    wrote = any(m["role"] == "tool" for m in request["messages"])
    if "new_answer" in offered and not wrote:
        content = f"print('from {request['model']}')\n"
        return Reply(tool_calls=[("write_file", {"path": "hello.py", "content": content})])
    return cooperative_agent(request)


async def test_the_board_shows_each_answers_files_and_its_diff():
    view = new_view(IDS)
    app = view.app
    with FakeProvider(writer) as fake:
        agents = workspace_agents(fake.base_url, IDS, model="model-{n}")
        config = {"agents": agents, "orchestrator": {"max_new_answers_per_agent": 1}}
        run = TeamRun(load(config), QUESTION, sinks=[view], approver=view.approver, logs=False)
        async with app.run_test(size=SIZE) as pilot:
            await run_turn(app, run.execute())
            await until(lambda: app.query_one(TabbedContent).active == "final", "final tab")
            await pilot.press("a")
            await pilot.pause()
            answers = [f for f in folds(app, "#board") if " · " in f.title]
            assert len(answers) == 3
            for answer in answers:
                shown = fold_text(answer)
                assert "files: 1 added (hello.py)" in shown, shown
                diff = answer.query_one(Collapsible)
                assert diff.title == "workspace diff" and diff.collapsed
                code = diff.query_one("Contents > Static", Static).content.code  # highlighted
                assert "+++ b/hello.py" in code and "+print('from model-" in code
            answers[0].query_one("CollapsibleTitle").focus()  # they open and draw
            await pilot.press("enter")
            diff.query_one("CollapsibleTitle").focus()
            await pilot.press("enter")
            await pilot.pause()
            assert not diff.collapsed
