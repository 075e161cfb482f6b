"""The live view, rendered from fixed events into fixed-size text and compared exactly."""

from __future__ import annotations

import asyncio
from io import StringIO

from rich.console import Console
from run_events import LABELS, QUESTION, coordination, ending, tool_calls

from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.ui.live import LiveView, render_live
from massgen.ui.model import ViewModel


def screen(renderable, width: int = 80, height: int = 24) -> str:
    """What a `width` x `height` terminal shows, trailing blanks trimmed per line."""
    console = Console(
        file=StringIO(), width=width, height=height, color_system=None, force_terminal=False
    )
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines()) + "\n"


def model_of(events) -> ViewModel:
    model = ViewModel()
    for event in events:
        model.apply(event)
    return model


MID_RUN = """\
massgen · What is the capital of France? Answer in one short paragraph.
╭─ careful (agent1) ──────╮╭─ balanced (agent2) ─────╮╭─ creative (agent3) ────╮
│ ✓ answered agent1.1     ││ ✓ voted for agent1.1    ││ ✗ failed: AuthFailed:… │
│ France is a country;    ││ Paris, on the Seine.    ││ ⚙ search({"q":         │
│ its capital is Paris.   ││ ↻ restarted: new        ││ "France"})             │
│ The capital of France   ││ answers arrived         ││ ✗ failed: AuthFailed:  │
│ is Paris.               ││ ── run 2 · sees         ││ Incorrect API key      │
│ ✓ new answer agent1.1   ││ agent1.1 ──             ││ provided               │
│                         ││ ✓ vote for agent1.1:    ││                        │
│                         ││ correct and short       ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
│                         ││                         ││                        │
╰─────────────────────────╯╰─────────────────────────╯╰────────────────────────╯
⏱ 1:12 · coordinating · answers 1 · votes 1/2 · tokens 2,440
"""


def test_three_agents_mid_run_at_80_columns():
    frame = render_live(model_of(coordination()), width=80, height=23, elapsed=72)
    assert screen(frame) == MID_RUN


RESULT = """\
massgen · What is the capital of France? Answer in one short paragraph.
careful (agent1)   ★ winner · answered agent1.1 · voted for agent1.1
balanced (agent2)  voted for agent1.1
creative (agent3)  ✗ failed: AuthFailed: Incorrect API key provided
────────────────────────── winner: careful (agent1.1) ──────────────────────────
votes: agent1.1 = 2
degraded: consensus: 2 of 3 agents hold a standing vote; failed: creative

                                     Paris

The capital of France is Paris.

 • on the Seine
 • 2.1 million people
───────────────── 1:12 · answers 1 · votes 2/2 · tokens 2,440 ──────────────────
"""


def test_the_run_ends_with_winner_tally_and_the_answer_as_markdown():
    out = StringIO()
    console = Console(file=out, width=80, height=24, color_system=None, force_terminal=False)
    ticks = iter([0.0, *[72.0] * 100])
    view = LiveView(console, clock=lambda: next(ticks))
    for event in coordination() + ending():
        view(event)
    text = "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"
    assert text == RESULT


def test_a_restarted_agent_says_why_while_it_thinks_again():
    events = coordination()[:11]  # balanced has just started its second run
    frame = screen(render_live(model_of(events), width=80, height=12, elapsed=3))
    assert "⋯ thinking (run 2;" in frame
    wide = screen(render_live(model_of(events), width=200, height=12, elapsed=3), width=200)
    assert "⋯ thinking (run 2; restarted: new answers arrived)" in wide


def _team(n: int, words: int) -> ViewModel:
    ids = [f"agent_{i}" for i in range(1, n + 1)]
    model = ViewModel()
    model.apply(
        ev.RunStarted(
            question=QUESTION, agents=tuple(ids), labels={a: a.replace("_", "") for a in ids}
        )
    )
    for agent in ids:
        model.apply(ev.AgentStarted(agent=agent, run=1, answers_in_view=()))
        model.apply(ev.TextDelta(agent=agent, text=" ".join(f"w{i}" for i in range(words))))
    return model


def test_one_agent_gets_the_whole_width_and_shows_the_tail_of_a_long_stream():
    text = screen(render_live(_team(1, 5000), width=80, height=23, elapsed=0))
    lines = text.splitlines()
    assert len(lines) == 23 and all(len(line) == 80 for line in lines[1:-1])
    assert "w4999" in lines[-3]  # the newest words sit on the panel's last line
    assert "w0 " not in text and "w100 " not in text


def test_eight_agents_fit_an_80x24_terminal():
    text = screen(render_live(_team(8, 300), width=80, height=23, elapsed=0))
    lines = text.splitlines()
    assert len(lines) <= 23 and max(len(line) for line in lines) <= 80
    for i in range(1, 9):
        assert f"agent_{i} (agent{i})" in text
    assert text.count("w299") == 8


def test_a_short_terminal_gets_one_line_per_agent():
    text = screen(render_live(_team(8, 30), width=80, height=11, elapsed=0))
    assert text.splitlines()[1:9] == [f"agent_{i} (agent{i}) ⋯ thinking" for i in range(1, 9)]
    assert "╭" not in text


def test_control_characters_in_model_output_never_reach_the_screen():
    model = _team(1, 0)
    model.apply(ev.TextDelta(agent="agent_1", text="ok\r\x1b[2J\x07\tdone"))
    text = screen(render_live(model, width=80, height=8, elapsed=0))
    assert "\x1b" not in text and "\r" not in text and "ok[2J    done" in text


def test_the_pane_keeps_a_bounded_tail():
    model = _team(1, 0)
    for i in range(20000):
        model.apply(ev.TextDelta(agent="agent_1", text=f"chunk{i} "))
    pane = model.pane("agent_1")
    assert pane.chars <= 12_000 and pane.runs[-1][1].endswith("chunk19999 ")


async def test_redraws_are_rate_limited_and_the_last_state_is_drawn():
    out = StringIO()
    console = Console(file=out, width=80, height=24, color_system=None, force_terminal=True)
    view = LiveView(console, refresh_per_second=8)
    view(ev.RunStarted(question="q", agents=("a",), labels={"a": "agent1"}))
    for i in range(5000):
        view(ev.TextDelta(agent="a", text=f"t{i} "))
    assert view.frames <= 2  # the first frame, and at most one more: not 5000
    await asyncio.sleep(0.3)
    assert view.frames >= 2 and "t4999" in out.getvalue()
    drawn = len(out.getvalue())
    view.close()
    assert "\x1b[?25h" in out.getvalue()[drawn:]  # the cursor is shown again


def test_labels_map_to_agents_in_panel_titles():
    frame = screen(render_live(model_of(coordination()[:1]), width=80, height=10, elapsed=0))
    for agent, label in LABELS.items():
        assert f"{agent} ({label})" in frame


def test_an_interrupted_run_shows_the_best_answer_so_far():
    out = StringIO()
    view = LiveView(Console(file=out, width=80, color_system=None), clock=lambda: 0.0)
    for event in coordination():
        view(event)
    view(
        ev.RunFinished(
            outcome=Outcome(
                answer="Paris.",
                status=Status.INTERRUPTED,
                reason="interrupted by the user",
                winner="careful",
                winner_label="agent1.1",
            )
        )
    )
    text = out.getvalue()
    assert "best answer so far: careful (agent1.1)" in text
    assert "interrupted: interrupted by the user" in text and "Paris." in text


TOOLS_PANEL = """\
╭─ careful (agent1) ───────────────────────────────────────────────────────────╮
│ ⋯ thinking                                                                   │
│ ⚙ lookup({"city": "Paris"})                                                  │
│ ⚙ fetch({})                                                                  │
│ ✓ lookup 0.04s: Paris: 2.1 million people                                    │
│ ✗ fetch 60s: Error: `fetch` timed out after 60s.                             │
│ ⚙ send_email({})                                                             │
│ ⏸ send_email held for the final presentation                                 │
"""


def test_tool_calls_show_in_the_agents_pane_with_outcome_and_duration():
    frame = screen(render_live(model_of(tool_calls()), width=80, height=12, elapsed=2))
    assert TOOLS_PANEL in frame


def test_the_state_line_names_the_tool_calls_in_flight():
    def state_line(count: int) -> str:
        frame = screen(render_live(model_of(tool_calls()[:count]), width=80, height=12, elapsed=1))
        return frame.splitlines()[2]

    assert state_line(3).startswith("│ ⚙ lookup…  ")
    assert state_line(4).startswith("│ ⚙ 2 tools…  ")
    assert state_line(5).startswith("│ ⚙ fetch…  ")  # lookup is done, fetch still runs
    assert state_line(6).startswith("│ ⋯ thinking  ")
