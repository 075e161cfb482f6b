"""Tool calls as cards: the title says how the call went, opening it shows the arguments,
the permission decision, progress lines and the result; reasoning is folded."""

from __future__ import annotations

from app_driver import SIZE, agent_entries, fold_text, folds, plain, until
from textual.widgets import Collapsible

from massgen.core import events as ev
from massgen.ui.tui.view import TuiView

START = [
    ev.RunStarted(question="q", agents=("careful",), labels={"careful": "agent1"}),
    ev.AgentStarted(agent="careful", run=1, answers_in_view=()),
    ev.ReasoningDelta(agent="careful", text="Search first, then answer."),
    ev.ToolCallStarted(agent="careful", call_id="c1", name="search", arguments='{"q": "France"}'),
    ev.PermissionDecided(
        agent="careful", call_id="c1", tool="search", allowed=True, operator="rule", reason="reads"
    ),
    ev.ToolCallProgress(agent="careful", call_id="c1", name="search", message="3 pages read"),
]
DONE = ev.ToolCallFinished(
    agent="careful", call_id="c1", name="search", result="Paris is the capital.", ok=True,
    duration_s=0.42,
)  # fmt: skip


async def test_a_tool_call_is_a_card_that_opens():
    view = TuiView()
    app = view.app
    async with app.run_test(size=SIZE) as pilot:
        for event in START:
            view(event)
        await pilot.press("t")
        card = await until(lambda: folds(app, "#tool-cards"), "the card")
        assert card[0].title == "⚙ search · running · 3 pages read" and card[0].collapsed
        view(DONE)
        await until(lambda: card[0].title.startswith("✓ search"), "the finished title")
        card[0].query_one("CollapsibleTitle").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not card[0].collapsed
        body = plain(card[0].query_one("Contents > Static").content)
        for shown in ('{"q": "France"}', "allowed by rule: reads", "3 pages read", "Paris is"):
            assert shown in body

        # The stream folds the reasoning; a key opens it.
        await pilot.press("s")
        await pilot.pause()
        reasoning = app.query_one("#stream-view").query_one(Collapsible)
        assert reasoning.collapsed and reasoning.title == "reasoning · 26 chars"
        assert fold_text(reasoning) == "Search first, then answer."


def mcp_call(number: int, *, done: bool = True) -> list[ev.AnyEvent]:
    call_id, name = f"m{number}", "mcp__fs__read_file"
    events: list[ev.AnyEvent] = [
        ev.ToolCallStarted(agent="careful", call_id=call_id, name=name, arguments=f'"{number}"')
    ]
    if done:
        events.append(
            ev.ToolCallFinished(agent="careful", call_id=call_id, name=name, result="text",
                                ok=True, duration_s=0.01)
        )  # fmt: skip
    return events


def shown_titles(app) -> list[str]:
    """The tool tab's lines as shown: card titles and "+N more" lines, hidden ones left out."""
    lines = []
    for widget in app.query_one("#tool-cards").children:
        if not widget.display:
            continue
        lines.append(widget.title if isinstance(widget, Collapsible) else plain(widget.content))
    return [line.strip() for line in lines]


async def test_a_run_of_mcp_calls_folds_into_n_more_which_opens():
    view = TuiView()
    app = view.app
    async with app.run_test(size=SIZE) as pilot:
        for event in START[:2]:
            view(event)
        for number in range(1, 7):
            for event in mcp_call(number):
                view(event)
        for event in mcp_call(7, done=False):  # still running: never folded
            view(event)
        await pilot.press("t")
        await until(lambda: len(shown_titles(app)) == 4, "the folded run")
        titles = shown_titles(app)
        assert titles[0] == "▶ +4 more mcp__fs calls"
        assert [t.split(" · ")[0] for t in titles[1:]] == [
            "✓ mcp__fs__read_file", "✓ mcp__fs__read_file", "⚙ mcp__fs__read_file"
        ]  # fmt: skip
        app.query_one("MoreCalls").focus()
        await pilot.press("enter")
        await until(lambda: len(shown_titles(app)) == 8, "the run opened")
        assert shown_titles(app)[0] == "▼ +4 more mcp__fs calls (shown)"
        # The running call finishes: it joins the run, which folds one more once closed.
        for event in mcp_call(7)[1:]:
            view(event)
        await pilot.press("enter")
        await until(lambda: shown_titles(app)[0] == "▶ +5 more mcp__fs calls", "refolded")
        assert len(shown_titles(app)) == 3


async def test_subagents_are_listed_under_their_parent():
    view = TuiView()
    app = view.app
    two = ev.RunStarted(
        question="q",
        agents=("careful", "balanced"),
        labels={"careful": "agent1", "balanced": "agent2"},
    )
    spawned = [
        ev.SubagentStarted(agent="balanced", call_id="s1", subagent=name, task=task)
        for name, task in (("prices", "find the 2024 prices"), ("maps", "draw the route"))
    ]
    done = ev.SubagentFinished(
        agent="balanced", call_id="s1", subagent="prices", outcome="completed", answer="12 EUR",
        duration_s=2.5,
    )  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        for event in [two, *spawned]:
            view(event)
        entries = await until(lambda: len(agent_entries(app)) == 2 and agent_entries(app), "list")
        await pilot.pause(0.3)
        careful, balanced = agent_entries(app)
        assert "↳" not in careful
        lines = balanced.splitlines()
        assert lines[3:5] == [
            " ↳ prices · running · find the 2024 prices",
            " ↳ maps · running · draw the route",
        ], entries
        view(done)
        await until(lambda: "completed" in agent_entries(app)[1], "the finished subagent")
        assert " ↳ prices · completed in 2.5s · find the 2024 prices" in agent_entries(app)[1]
