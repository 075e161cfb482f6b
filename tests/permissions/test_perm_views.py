"""Decisions show where a user looks: the plain view, the live view's pane, the table,
and the event log round-trips them."""

from __future__ import annotations

from shown import printed

from massgen.core import events as ev
from massgen.record import coordination_table

REFUSED = ev.PermissionDecided(agent="a", call_id="c1", tool="execute_command", allowed=False,
                               operator="policy", reason="`curl x` is high risk", seq=3)  # fmt: skip
RULE_ALLOWED = ev.PermissionDecided(agent="a", call_id="c2", tool="read_file", allowed=True,
                                    operator="rule", reason="ok", seq=4)  # fmt: skip
HUMAN_ALLOWED = ev.PermissionDecided(agent="a", call_id="c3", tool="write_file", allowed=True,
                                     operator="human", reason="approved (once)", seq=5)  # fmt: skip


def test_the_plain_view_shows_refusals_only():
    assert (
        printed((REFUSED, RULE_ALLOWED, HUMAN_ALLOWED))
        == "[a] ✗ refused execute_command: `curl x` is high risk\n"
    )


def test_the_table_shows_refusals_and_what_an_approver_allowed():
    start = ev.RunStarted(question="q", agents=("a",), labels={"a": "agent1"})
    table = coordination_table([start, REFUSED, RULE_ALLOWED, HUMAN_ALLOWED])
    assert "perm #3 execute_command: REFUSED" in table
    assert "perm #5 write_file: allowed by" in table and "human" in table
    assert "read_file" not in table


def test_the_event_round_trips_through_json():
    assert ev.event_from_dict(REFUSED.to_dict()) == REFUSED
