"""The event union is closed: every event class is in it, with a JSON type of its own."""

from __future__ import annotations

import json
from typing import get_args

from massgen.core import event_groups as groups
from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.types import HostedActivity, Source


def test_every_event_class_is_in_the_union_with_a_distinct_type():
    members = set(get_args(ev.AnyEvent))
    # By name: a slotted dataclass leaves its pre-slots class among the subclasses.
    assert {c.__name__ for c in members} == {c.__name__ for c in ev.Event.__subclasses__()}
    kinds = [cls.kind for cls in members]
    assert len(set(kinds)) == len(kinds)


def test_an_event_reads_back_from_its_json_form():
    outcome = Outcome(
        answer="Paris", status=ev.Status.TIMEOUT, reason="r", winner="a", winner_label="agent1.1"
    )
    event = ev.RunFinished(outcome=outcome)
    data = event.to_dict()
    assert data["type"] == "run_finished" and data["status"] == "timeout"
    assert ev.event_from_dict(data) == event


def test_a_tool_call_reads_back_with_its_duration_and_outcome():
    event = ev.ToolCallFinished(
        agent="a", call_id="c1", name="lookup", result="42", ok=True, duration_s=0.25, held=True
    )
    data = event.to_dict()
    assert (data["type"], data["duration_s"], data["held"]) == ("tool_call_finished", 0.25, True)
    assert ev.event_from_dict(data) == event


def test_a_tool_source_failure_reads_back():
    event = ev.ToolSourceFailed(agent="a", source="calc", error="did not start")
    data = event.to_dict()
    assert (data["type"], data["source"]) == ("tool_source_failed", "calc")
    assert ev.event_from_dict(data) == event


# A line of events.jsonl as every massgen so far has written a hosted tool's use.
HOSTED_LINE = (
    '{"type": "hosted_tool_used", "at": 1.0, "agent": "a", "call_id": "ws1", '
    '"tool": "web_search", "query": "q", "sources": [{"url": "https://e.org", "title": "E"}], '
    '"code": "", "output": "", "ok": true, "phase": "presentation"}'
)


def test_a_hosted_tool_use_keeps_its_line_in_the_log():
    activity = HostedActivity(
        "ws1", "web_search", query="q", sources=(Source("https://e.org", "E"),)
    )
    event = ev.HostedToolUsed(agent="a", activity=activity, phase="presentation", at=1.0)
    assert json.dumps(event.to_dict()) == HOSTED_LINE
    assert ev.event_from_dict(json.loads(HOSTED_LINE)) == event


# The end of a run as every massgen so far has written it.
FINISHED_LINE = (
    '{"type": "run_finished", "at": 2.0, "answer": "Paris", "status": "degraded", '
    '"reason": "1 agent failed", "winner": "a", "winner_label": "agent1.1", '
    '"failed_agents": {"b": "AuthFailed"}}'
)


def test_the_end_of_a_run_keeps_its_line_in_the_log():
    outcome = Outcome(
        answer="Paris",
        status=ev.Status.DEGRADED,
        reason="1 agent failed",
        winner="a",
        winner_label="agent1.1",
        failed_agents={"b": "AuthFailed"},
    )
    event = ev.RunFinished(outcome=outcome, at=2.0)
    assert json.dumps(event.to_dict()) == FINISHED_LINE
    assert ev.event_from_dict(json.loads(FINISHED_LINE)) == event


def test_every_event_is_in_exactly_one_group():
    grouped = [cls for group in groups.GROUPS for cls in get_args(group)]
    assert sorted(c.__name__ for c in grouped) == sorted(c.__name__ for c in get_args(ev.AnyEvent))


class _GroupNames(groups.GroupFold[str]):
    def on_stream(self, event: groups.AgentStream) -> str:
        return "stream"

    def on_tool(self, event: groups.ToolActivity) -> str:
        return "tool"

    def on_decision(self, event: groups.Decision) -> str:
        return "decision"

    def on_aid(self, event: groups.AidActivity) -> str:
        return "aid"

    def on_progress(self, event: groups.RunProgress) -> str:
        return "progress"


def test_a_fold_hands_every_event_to_the_method_of_its_group():
    fold, names = _GroupNames(), ("stream", "tool", "decision", "aid", "progress")
    for name, group in zip(names, groups.GROUPS, strict=True):
        for cls in get_args(group):
            event = object.__new__(cls)  # its class is all that the dispatch reads
            assert fold.fold(event) == name, cls.__name__


def test_a_subclass_of_an_event_class_folds_as_its_base_does():
    class Late(ev.TextDelta):
        pass

    assert _GroupNames().fold(Late(agent="a", text="x")) == "stream"
