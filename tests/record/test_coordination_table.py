"""The coordination table: exact text for a small run, bounded width for a large team."""

from __future__ import annotations

import json
from pathlib import Path

from recorded_run_script import QUESTION

from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.status import Status
from massgen.record import Recorder, coordination_table, table_from_log


def small_run() -> list[ev.AnyEvent]:
    return [
        ev.RunStarted(
            question="q",
            agents=("a", "b", "c"),
            labels={"a": "agent1", "b": "agent2", "c": "agent3"},
        ),
        ev.AgentStarted(agent="a", run=1, answers_in_view=()),
        ev.AgentStarted(agent="b", run=1, answers_in_view=()),
        ev.AnswerPublished(agent="a", label="agent1.1", content="x"),
        ev.TextDelta(agent="b", text="ignored"),
        ev.VoteCast(
            agent="b", voter_label="agent2", target="a", target_label="agent1.1", reason="ok"
        ),
        ev.AgentFailed(agent="c", error="AuthFailed: bad key"),
        ev.AnswerPublished(agent="a", label="agent1.2", content="y"),
        ev.VoteInvalidated(agent="b", target_label="agent1.1", newer_label="agent1.2"),
        ev.AgentRestarted(agent="b", reason="new answer"),
        ev.AgentStarted(agent="b", run=2, answers_in_view=("agent1.2",), vote_only=True),
        ev.ActionRejected(agent="b", reason="no such label", attempt=1),
        ev.VoteCast(
            agent="b", voter_label="agent2", target="a", target_label="agent1.2", reason="ok"
        ),
        ev.VoteCast(
            agent="a", voter_label="agent1", target="a", target_label="agent1.2", reason="ok"
        ),
        ev.CoordinationFinished(
            winner="a", winner_label="agent1.2", tally={"agent1.2": 2}, reason="consensus"
        ),
        ev.PresentationStarted(agent="a", strategy="winner_present"),
        ev.RunFinished(
            outcome=Outcome(
                answer="y",
                status=Status.DEGRADED,
                reason="1 agent failed",
                winner="a",
                winner_label="agent1.2",
            )
        ),
    ]


EXPECTED = """\
a                  | b                  | c
-------------------+--------------------+-------------------
run 1 · sees none
                   | run 1 · sees none
answer agent1.1
                   | vote → agent1.1
                   |                    | FAILED:
                   |                    |   AuthFailed: bad
                   |                    |   key
answer agent1.2
                   | vote → agent1.1
                   |   invalid (new
                   |   agent1.2)
                   | restart: new
                   |   answer
                   | run 2 · sees
                   |   agent1.2 · vote
                   |   only
                   | rejected #1: no
                   |   such label
                   | vote → agent1.2
vote → agent1.2
presents
  (winner_present)
============================================================
winner: a (agent1.2)
tally: agent1.2 = 2
reason: consensus
result: degraded · 1 agent failed
"""


def test_small_run_exact_text() -> None:
    assert coordination_table(small_run(), width=60) == EXPECTED


def big_team(n: int) -> list[ev.AnyEvent]:
    ids = tuple(f"agent_with_a_long_name_{i}" for i in range(1, n + 1))
    labels = {a: f"agent{i}" for i, a in enumerate(ids, 1)}
    events: list[ev.AnyEvent] = [ev.RunStarted(question="q", agents=ids, labels=labels)]
    for i, a in enumerate(ids, 1):
        seen = tuple(f"agent{j}.1" for j in range(1, i))
        events.append(ev.AgentStarted(agent=a, run=1, answers_in_view=seen))
        events.append(ev.AnswerPublished(agent=a, label=f"agent{i}.1", content="x"))
    events.append(
        ev.AgentFailed(agent=ids[-1], error="ProviderUnavailable: " + "stream stopped " * 20)
    )
    for i, a in enumerate(ids[:-1], 1):
        events.append(
            ev.VoteCast(
                agent=a, voter_label=f"agent{i}", target=ids[0], target_label="agent1.1", reason=""
            )
        )
    tally = {"agent1.1": n - 1}
    events.append(
        ev.CoordinationFinished(
            winner=ids[0],
            winner_label="agent1.1",
            tally=tally,
            reason="consensus " * 30,
            tie_break="earliest answer",
        )
    )
    return events


def test_eight_agents_fit_in_120_columns() -> None:
    table = coordination_table(big_team(8))
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= 120
    headers = lines[0].split(" | ")
    assert [h.strip() for h in headers] == [f"agent…name_{i}" for i in range(1, 9)]
    assert "tie-break: earliest answer" in table
    assert any("agent7.1" in line for line in lines)  # agent 8 saw it, wrapped or not


def test_one_agent_table() -> None:
    events = big_team(1)
    table = coordination_table(events)
    assert table.splitlines()[0] == "agent_with_a_long_name_1"
    assert max(len(line) for line in table.splitlines()) <= 32


def test_no_events() -> None:
    assert coordination_table([]) == "(no coordination events)\n"


def test_table_from_log_skips_a_torn_last_line(tmp_path: Path) -> None:
    recorder = Recorder(
        tmp_path, question=QUESTION, config_raw=None, config_path=None, cli_args=None
    )
    for event in small_run():
        recorder.handle(event)
    recorder.close()
    with (tmp_path / "events.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"type": "vote_cast", "agent": "c"})[:20])
    assert table_from_log(tmp_path) == coordination_table(small_run())


def test_a_tool_call_is_one_row_when_it_finishes() -> None:
    def finished(name: str, **outcome) -> ev.ToolCallFinished:
        return ev.ToolCallFinished(agent="a", call_id=name, name=name, result="r", **outcome)

    events = [
        ev.RunStarted(question="q", agents=("a", "b"), labels={"a": "agent1", "b": "agent2"}),
        ev.ToolCallStarted(agent="a", call_id="lookup", name="lookup", arguments="{}"),
        finished("lookup", ok=True, duration_s=0.042),
        finished("fetch", ok=False, duration_s=60.0),
        finished("send_email", ok=True, held=True),
    ]
    assert coordination_table(events, width=60) == (
        "a                            | b\n"
        "-----------------------------+-----------------------------\n"
        "tool lookup: ok 0.04s\n"
        "tool fetch: error 60s\n"
        "tool send_email: held\n"
    )


def test_a_tool_call_of_the_final_presentation_says_so() -> None:
    events = [
        ev.RunStarted(question="q", agents=("a", "b"), labels={"a": "agent1", "b": "agent2"}),
        ev.ToolCallFinished(
            agent="b", call_id="c", name="send", result="r", ok=True, duration_s=0.5
        ),
        ev.ToolCallFinished(
            agent="b",
            call_id="c2",
            name="send",
            result="r",
            ok=True,
            duration_s=0.25,
            phase="presentation",
        ),
    ]
    assert coordination_table(events, width=60) == (
        "a                            | b\n"
        "-----------------------------+-----------------------------\n"
        "                             | tool send: ok 0.50s\n"
        "                             | tool send (final): ok 0.25s\n"
    )
    data = events[2].to_dict()
    assert data["phase"] == "presentation" and ev.event_from_dict(data) == events[2]
