"""The journal: decided events are on disk before anyone acts on them; a torn last line
is dropped, never fatal; damage before it is reported."""

from __future__ import annotations

import asyncio

import pytest

from massgen.api import TeamRun
from massgen.core import events as ev
from massgen.record.journal import Journal, JournalError, read_journal
from massgen.runs.loading import load
from massgen.testing.fake_provider import FakeProvider


def started() -> ev.RunStarted:
    return ev.RunStarted(question="q", agents=("a",), labels={"a": "agent1"}, seed=1)


@pytest.mark.parametrize("tail", ['{"type": "answer_pub', "garbage\x00"])
def test_a_torn_last_line_is_dropped_and_the_next_attempt_appends_whole_lines(tmp_path, tail):
    path = tmp_path / "events.jsonl"
    journal = Journal(path)
    journal.append(started())
    journal.close()
    with path.open("a") as f:
        f.write(tail)  # what a SIGKILL mid-write leaves
    assert [e.kind for e in read_journal(path)] == ["run_started"]
    again = Journal(path)
    again.append(ev.AgentFailed(agent="a", error="x"))
    again.close()
    assert [e.kind for e in read_journal(path)] == ["run_started", "agent_failed"]


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path):
    path = tmp_path / "events.jsonl"
    Journal(path).close()
    path.write_text(path.read_text() + '{"type": "agent_failed", "agent": "a", "error": "x"}')
    Journal(path).close()
    assert [e.kind for e in read_journal(path)] == ["agent_failed"]
    assert path.read_text().endswith("\n")


def test_damage_before_the_last_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('not json\n{"type": "agent_failed", "agent": "a", "error": "x"}\n')
    with pytest.raises(JournalError, match="line 1"):
        read_journal(path)


def test_every_decision_is_in_the_journal_before_any_view_sees_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    missing: list[str] = []

    def view(event: ev.AnyEvent) -> None:
        if isinstance(event, ev.AnswerPublished | ev.VoteCast | ev.CoordinationFinished):
            journal = read_journal(run.log_dir / "events.jsonl")
            if not journal or journal[-1] != event:
                missing.append(event.kind)

    with FakeProvider() as fake:
        agents = [
            {
                "id": f"a{n}",
                "backend": {"type": "chatcompletion", "model": f"m{n}", "base_url": fake.base_url},
            }
            for n in range(3)
        ]
        run = TeamRun(load({"agents": agents}), "q", sinks=[view])
        result = asyncio.run(run.execute())
    assert result.ok and missing == []


def test_the_journal_bench_measures_decided_events_and_deltas(tmp_path):
    from bench.journal import journal_cost, section

    cost = journal_cost(events=5, where=tmp_path)
    assert cost.decided_s > 0 and cost.delta_s > 0
    assert "## 9. Journal" in section(cost)
