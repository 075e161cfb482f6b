"""Plain output: agent-prefixed lines, then the final answer, compared exactly."""

from __future__ import annotations

from io import StringIO

import pytest
from run_events import coordination, ending, tool_calls
from shown import printed

from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.ui.choice import wants_live
from massgen.ui.plain import PlainView

PLAIN = """\
massgen: 3 agent(s): careful, balanced, creative
[careful] The capital of France is Paris.
[careful] ✓ new answer agent1.1
[balanced] Paris, on the Seine.
[balanced] ↻ restarting: new answers arrived
[creative] ⚙ search({"q": "France"})
[creative] ✗ failed: AuthFailed: Incorrect API key provided
[balanced] ✓ vote for agent1.1: correct and short
[careful] ✓ vote for agent1.1: mine

votes — agent1.1: 2
winner: careful (agent1.1)
reason: consensus: 2 of 3 agents hold a standing vote

[careful] presenting the final answer…

==================== final answer ====================
# Paris

The capital of **France** is Paris.

- on the Seine
- 2.1 million people
(degraded: consensus: 2 of 3 agents hold a standing vote; failed: creative)
(agent creative failed: AuthFailed: Incorrect API key provided)
"""


def test_plain_output_of_a_run():
    assert printed(coordination() + ending()) == PLAIN


def test_concurrent_streams_print_whole_lines_and_unfinished_lines_come_before_the_result():
    out = StringIO()
    view = PlainView(out)
    view(ev.RunStarted(question="q", agents=("a", "b"), labels={"a": "agent1", "b": "agent2"}))
    for agent, text in [("a", "one "), ("b", "uno\ndos"), ("a", "two\nthree")]:
        view(ev.TextDelta(agent=agent, text=text))
    view(
        ev.RunFinished(
            outcome=Outcome(
                answer="done", status=Status.OK, reason="r", winner="a", winner_label="agent1.1"
            )
        )
    )
    assert out.getvalue().splitlines()[:5] == [
        "massgen: 2 agent(s): a, b",
        "[b] uno",
        "[a] one two",
        "[a] three",
        "[b] dos",
    ]
    assert out.getvalue().endswith("final answer " + "=" * 20 + "\ndone\n")


class Tty(StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("no_display", "stream", "env", "live"),
    [
        (False, Tty(), {"TERM": "xterm-256color"}, True),
        (False, StringIO(), {"TERM": "xterm-256color"}, False),  # piped or redirected
        (True, Tty(), {"TERM": "xterm-256color"}, False),  # --no-display
        (False, Tty(), {"TERM": "xterm", "NO_COLOR": "1"}, False),
        (False, Tty(), {"TERM": "xterm", "NO_COLOR": ""}, True),  # empty means unset
        (False, Tty(), {"TERM": "dumb"}, False),
    ],
)
def test_the_live_view_only_where_it_is_wanted(no_display, stream, env, live):
    assert wants_live(no_display=no_display, stream=stream, env=env) is live


TOOLS = """\
massgen: 1 agent(s): careful
[careful] ⚙ lookup({"city": "Paris"})
[careful] ⚙ fetch({})
[careful] ✓ lookup 0.04s: Paris: 2.1 million people
[careful] ✗ fetch 60s: Error: `fetch` timed out after 60s.
[careful] ⚙ send_email({})
[careful] ⏸ send_email held for the final presentation (planning mode)
"""


def test_tool_calls_show_their_outcome_and_duration():
    assert printed(tool_calls()) == TOOLS
