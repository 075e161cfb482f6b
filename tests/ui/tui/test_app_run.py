"""The app follows a real three-agent run on the loopback fake: agent states, answers,
votes and their reasons, the agreement line and the final answer, driven by keys."""

from __future__ import annotations

import asyncio

import pytest
from app_driver import (
    AGENTS,
    QUESTION,
    SIZE,
    agent_entries,
    fold_text,
    folds,
    new_view,
    plain,
    shown_in,
    team_file,
    team_run,
    text_of,
    until,
)
from textual.widgets import TabbedContent

from massgen.api import TeamRun
from massgen.runs.loading import load
from massgen.testing.fake_provider import FakeProvider
from massgen.testing.policy import Reply, cooperative_agent
from massgen.testing.teams import workspace_agents
from massgen.ui.tui.approval import ApprovalDialog
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


COMMAND = "touch made_by_agent.txt"


def runs_a_command_first(request: dict) -> Reply:
    """careful runs a command its first turn (not known to be safe: the engine asks), then
    every agent answers and votes as the cooperative agent does."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    ran = any(m["role"] == "tool" for m in request["messages"])
    if request["model"] == "careful" and "new_answer" in offered and not ran:
        return Reply(tool_calls=[("execute_command", {"command": COMMAND})])
    return cooperative_agent(request)


async def test_a_run_with_a_tool_an_ask_and_a_vote_is_followed_and_answered_in_the_app(tmp_path):
    """The issue's done-when: three agents, a command that needs the person's yes, the
    dialog answered with keys, the vote round and the final answer, all in the app."""
    view = new_view()
    app = view.app
    with FakeProvider(runs_a_command_first) as fake:
        agents = workspace_agents(fake.base_url, AGENTS, model="{id}", enable_mcp_command_line=True)
        config = {"agents": agents, "orchestrator": {"max_new_answers_per_agent": 1}}
        run = TeamRun(load(config), QUESTION, sinks=[view], approver=view.approver, logs=False)
        async with app.run_test(size=SIZE) as pilot:
            turn = asyncio.create_task(run_turn(app, run.execute()))
            await until(
                lambda: isinstance(app.screen, ApprovalDialog) and app.screen.query("#choices"),
                "the permission dialog",
            )
            asked = "\n".join(plain(s.content) for s in app.screen.query("Static"))
            assert "execute_command" in asked and "touch made_by_agent.txt" in asked
            await pilot.press("up", "up", "up", "enter")  # allow once
            result = await asyncio.wait_for(turn, 60)
            await until(lambda: app.query_one(TabbedContent).active == "final", "final tab")

            assert result.ok and len(result.votes) == 3  # a vote round, not an agreement
            made = list((tmp_path / ".massgen" / "workspaces").rglob("made_by_agent.txt"))
            # In careful's workspace (and the presenter's copy of the winner's), no other.
            assert "ws0" in {p.parent.name for p in made} <= {"ws0", ".final"}
            assert f"winner: {result.winner}" in text_of(app, "#outcome")
            await pilot.press("1", "t")  # careful's tool calls: the card says who allowed it
            await pilot.pause()
            (card,) = folds(app, "#tool-cards")
            assert "execute_command" in card.title
            body = plain(card.query_one("Contents > Static").content)
            assert "allowed by human" in body and COMMAND in body
