"""Generated personas and criteria, and a failed generation, in the views and the
coordination table, compared exactly."""

from __future__ import annotations

from shown import printed
from test_live import model_of, screen

from massgen.core import events as ev
from massgen.record.table import coordination_table
from massgen.ui.live import render_live


def prepared_run() -> list[ev.AnyEvent]:
    labels = {"ann": "agent1", "ben": "agent2"}
    return [
        ev.RunStarted(question="Plan a trip.", agents=("ann", "ben"), labels=labels, at=0),
        ev.PersonaAssigned(
            agent="ann",
            persona="You optimise for the traveller's comfort.",
            summary="comfort",
            at=1,
        ),
        ev.CriteriaGenerated(
            agent="ann",
            criteria=("E1 (primary): Every day has a plan.", "E2 (standard): Costs add up."),
            aspiration="a travel agent would use it",
            at=1,
        ),
        ev.GeneratorFailed(agent="ben", what="personas", error="no reply within 120s", at=2),
    ]


PANES = """\
massgen · Plan a trip.
╭─ ann (agent1) ───────────────────────╮╭─ ben (agent2) ───────────────────────╮
│ waiting                              ││ waiting                              │
│ 🎭 persona · comfort: You optimise   ││ ⚠ personas not generated, going on   │
│ for the traveller's comfort.         ││ without: no reply within 120s        │
│ 📋 evaluation criteria for the team  ││                                      │
│ (2)                                  ││                                      │
│   E1 (primary): Every day has a      ││                                      │
│ plan.                                ││                                      │
│   E2 (standard): Costs add up.       ││                                      │
╰──────────────────────────────────────╯╰──────────────────────────────────────╯
⏱ 0:02 · coordinating · answers 0 · votes 0/2 · tokens 0
"""


def test_the_live_view_shows_the_persona_the_criteria_and_the_warning_in_their_panes():
    frame = render_live(model_of(prepared_run()), width=80, height=12, elapsed=2)
    assert screen(frame, height=12) == PANES


PLAIN = """\
massgen: 2 agent(s): ann, ben
[ann] persona (comfort): You optimise for the traveller's comfort.
[ann] evaluation criteria for the team:
[ann]   E1 (primary): Every day has a plan.
[ann]   E2 (standard): Costs add up.
[ben] ⚠ personas not generated, going on without: no reply within 120s
"""


def test_plain_output_prints_them_prefixed():
    assert printed(prepared_run()) == PLAIN


def test_they_read_back_from_their_json_form_and_fill_the_table():
    for event in prepared_run():
        assert ev.event_from_dict(event.to_dict()) == event
    table = coordination_table(prepared_run(), width=100)
    assert "persona: comfort" in table and "wrote 2 evaluation criteria" in table
    assert "personas not generated: no reply" in table
