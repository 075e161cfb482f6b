"""Provider-hosted tool uses in the views and the coordination table, compared exactly."""

from __future__ import annotations

from shown import printed
from test_live import model_of, screen

from massgen.core import events as ev
from massgen.core.types import HostedActivity, Source
from massgen.record.table import coordination_table
from massgen.ui.live import render_live

SOURCES = tuple(Source(f"https://e.org/{n}", f"Page {n}") for n in range(1, 8))


def hosted_run() -> list[ev.AnyEvent]:
    return [
        ev.RunStarted(question="Tallest?", agents=("scout",), labels={"scout": "agent1"}, at=0),
        ev.AgentStarted(agent="scout", run=1, answers_in_view=(), at=0),
        ev.HostedToolUsed(
            agent="scout",
            activity=HostedActivity("ws1", "web_search", query="tallest tower", sources=SOURCES),
            at=1,
        ),
        ev.HostedToolUsed(
            agent="scout",
            activity=HostedActivity(
                "ci1", "code_execution", code="print(828 * 3.28)", output="2715.84\n"
            ),
            at=1,
        ),
        ev.HostedToolUsed(
            agent="scout", activity=HostedActivity("ws2", "web_search", ok=False), at=2
        ),
    ]


PANE = """\
massgen · Tallest?
╭─ scout (agent1) ─────────────────────────────────────────────────────────────╮
│ ⋯ thinking                                                                   │
│ ⌕ web search (hosted): tallest tower · 7 sources                             │
│   [1] Page 1 <https://e.org/1>                                               │
│   [2] Page 2 <https://e.org/2>                                               │
│   [3] Page 3 <https://e.org/3>                                               │
│   [4] Page 4 <https://e.org/4>                                               │
│   [5] Page 5 <https://e.org/5>                                               │
│   … 2 more                                                                   │
│ ▶ code (hosted): print(828 * 3.28)                                           │
│   → 2715.84                                                                  │
│ ⌕ web search (hosted): … · 0 sources                                         │
│                                                                              │
╰──────────────────────────────────────────────────────────────────────────────╯
⏱ 0:03 · coordinating · answers 0 · votes 0/1 · tokens 0
"""


def test_the_live_view_shows_a_search_with_its_query_and_sources_and_code_with_output():
    frame = render_live(model_of(hosted_run()), width=80, height=16, elapsed=3)
    assert screen(frame, height=16) == PANE


PLAIN = """\
massgen: 1 agent(s): scout
[scout] ⌕ web search (hosted): tallest tower · 7 sources
[scout]   [1] Page 1 <https://e.org/1>
[scout]   [2] Page 2 <https://e.org/2>
[scout]   [3] Page 3 <https://e.org/3>
[scout]   [4] Page 4 <https://e.org/4>
[scout]   [5] Page 5 <https://e.org/5>
[scout]   … 2 more
[scout] ▶ code (hosted): print(828 * 3.28)
[scout]   → 2715.84
[scout] ⌕ web search (hosted): … · 0 sources
"""


def test_plain_output_prints_the_same_lines_prefixed():
    assert printed(hosted_run()) == PLAIN


def test_a_hosted_tool_use_reads_back_from_its_json_form_with_its_sources():
    event = hosted_run()[2]
    data = event.to_dict()
    assert data["type"] == "hosted_tool_used"
    assert data["sources"][0] == {"url": "https://e.org/1", "title": "Page 1"}
    assert ev.event_from_dict(data) == event


def test_the_coordination_table_counts_the_sources():
    table = coordination_table(hosted_run(), width=120)
    assert "hosted web_search: 7 sources" in table
    assert "hosted code_execution: ran" in table
    assert "hosted web_search: error" in table
