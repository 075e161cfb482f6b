"""The one usage fold: per run, per agent and in total, with estimates kept marked."""

from __future__ import annotations

import json

from massgen.core import events as ev
from massgen.core.types import Usage
from massgen.core.usage import UsageLedger


def used(agent: str, tokens: int, cost: float | None = None, **extra) -> ev.UsageReported:
    usage = Usage(input_tokens=tokens, output_tokens=1, estimated=extra.pop("estimated", False))
    return ev.UsageReported(agent=agent, usage=usage, cost_usd=cost, **extra)


def test_usage_is_counted_per_run_and_phase_and_an_estimate_stays_marked():
    ledger = UsageLedger()
    for event in [
        ev.AgentStarted(agent="a", run=1, answers_in_view=()),
        used("a", 10, 0.5),
        used("a", 5, estimated=True),  # a call cut short
        ev.AgentStarted(agent="a", run=2, answers_in_view=()),
        used("a", 7, 0.25),
        used("a", 3, 0.25, phase="presentation"),
    ]:
        ledger(event)
    rounds = [(r.run, r.phase, r.spend.usage.input_tokens) for r in ledger.rounds]
    assert rounds == [(1, "coordination", 15), (2, "coordination", 7), (2, "presentation", 3)]
    assert ledger.rounds[0].spend.usage.estimated and not ledger.rounds[1].spend.usage.estimated
    spent = ledger.of("a")
    assert spent.usage.input_tokens == 25 and spent.cost_usd == 1.0
    assert spent.unpriced  # the cut-short call had no price


def test_an_agent_without_a_price_costs_none_not_zero():
    ledger = UsageLedger()
    ledger(used("free", 10))
    ledger(used("paid", 10, 0.1))
    assert ledger.of("free").cost_usd is None and ledger.of("nobody").cost_usd is None
    assert ledger.total().cost_usd == 0.1 and ledger.total().usage.input_tokens == 20


def test_a_usage_event_keeps_its_flat_json_line_and_reads_back():
    event = used("a", 10, 0.5, estimated=True)
    line = json.loads(json.dumps(event.to_dict()))
    assert line["type"] == "usage" and line["input_tokens"] == 10 and line["estimated"] is True
    assert "usage" not in line
    assert ev.event_from_dict(line) == event
