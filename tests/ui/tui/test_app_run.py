"""The app follows a real three-agent run on the loopback fake: agent states, answers,
votes and their reasons, the agreement line and the final answer, driven by keys."""

from __future__ import annotations

import pytest
from app_driver import (
    QUESTION,
    SIZE,
    agent_entries,
    fold_text,
    folds,
    new_view,
    shown_in,
    team_file,
    team_run,
    text_of,
    until,
)
from textual.widgets import TabbedContent

from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import cooperative_agent
from massgen.ui.tui.view import run_turn

pytestmark = pytest.mark.usefixtures("in_tmp")


async def test_a_three_agent_run_is_followed_in_the_app(tmp_path):
    view = new_view()
    app = view.app
    with FakeProvider(cooperative_agent) as fake:
        turn = team_run(team_file(tmp_path, fake.base_url), view)
        async with app.run_test(size=SIZE) as pilot:
            result = await run_turn(app, turn.execute())
            await pilot.pause()
            await until(lambda: app.query_one(TabbedContent).active == "final", "final tab")
            await pilot.pause()

            # The agent list: every agent with its state, model and tokens; one winner.
            entries = agent_entries(app)
            assert len(entries) == 3
            assert sum("★ winner" in entry for entry in entries) == 1
            winner_entry = next(e for e in entries if e.startswith(result.winner))
            assert f"model-{result.winner}" in winner_entry and " tok" in winner_entry
            assert all("voted for" in entry for entry in entries)

            # The final tab: the outcome with the agreement line, the answer as Markdown.
            outcome = text_of(app, "#outcome")
            assert f"winner: {result.winner}" in outcome
            assert "agreement: the 3 first answers" in outcome
            assert text_of(app, "#final-answer") == result.answer
            assert QUESTION in text_of(app, "#question")
            status = text_of(app, "#status")
            assert "finished" in status and "votes 3/3" in status and "q quits" in status

            # The board: each answer opens to its text, each vote to its reason.
            await pilot.press("a")
            await pilot.pause()
            answers = [f for f in folds(app, "#board") if " · " in f.title]
            votes = [f for f in folds(app, "#board") if " → " in f.title]
            assert len(answers) == 3 and len(votes) == 3
            vote = votes[0]
            assert vote.collapsed
            vote.query_one("CollapsibleTitle").focus()
            await pilot.press("enter")
            await pilot.pause()
            assert not vote.collapsed
            voter = vote.title.split(" → ")[0]
            assert fold_text(vote) == f"{voter}: this answer is complete and correct."
            assert any("answer 1] A careful, complete answer" in fold_text(a) for a in answers)

            # Keys pick an agent: its name heads the right side, its stream shows.
            for number, agent in enumerate(("careful", "balanced", "creative"), start=1):
                await pilot.press(str(number))
                await pilot.press("s")
                await pilot.pause()
                assert text_of(app, "#agent-title").startswith(agent)
                stream = shown_in(app, "#stream-view")
                assert "✓ new answer" in stream and "✓ vote for" in stream, stream
            await pilot.press("[")
            await pilot.pause()
            assert text_of(app, "#agent-title").startswith("balanced")
