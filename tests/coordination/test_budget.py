"""A run's spending limit: no call starts past it; the run ends with its best answer so
far, status `budget`, exit 5, and a reason; the status line shows spend against it."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml

from massgen.cli import main
from massgen.coordination.budget import Budget
from massgen.core import events as ev
from massgen.core.types import Usage
from massgen.core.usage import Spend
from massgen.testing import FakeProvider
from massgen.ui.model import ViewModel, totals_text

pytestmark = pytest.mark.usefixtures("in_tmp")


def run(tmp_path: Path, base_url: str, *flags: str, orchestrator: dict | None = None):
    agents = [
        {
            "id": f"a{i}",
            "backend": {"type": "chatcompletion", "model": f"m{i}", "base_url": base_url},
        }
        for i in range(3)
    ]
    config = {"agents": agents, **({"orchestrator": orchestrator} if orchestrator else {})}
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(config))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--config", str(path), "--stream-events", "--no-logs", *flags, "q"])
    return code, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


def spent_tokens(events: list[dict]) -> int:
    return sum(e["input_tokens"] + e["output_tokens"] for e in events if e["type"] == "usage")


def test_an_unlimited_run_spends_what_the_budgets_below_are_cut_from(tmp_path):
    with FakeProvider() as fake:
        code, events, _ = run(tmp_path, fake.base_url)
    assert code == 0 and events[-1]["status"] == "ok"
    # Three answers, three votes and a presentation, of ~200 tokens each (see below).
    assert 1200 < spent_tokens(events) < 1800 and len(fake.requests) == 7


def test_a_token_budget_stops_new_calls_and_keeps_the_answers_so_far(tmp_path):
    with FakeProvider() as fake:
        code, events, _ = run(tmp_path, fake.base_url, "--max-tokens", "900")
        calls = len(fake.requests)
    finished = events[-1]
    assert code == 5 and finished["status"] == "budget"
    assert "token budget reached" in finished["reason"] and "900" in finished["reason"]
    assert spent_tokens(events) <= 900
    # The three first answers fit; no vote would have, so none was asked for.
    assert calls == 3 and sum(e["type"] == "answer_published" for e in events) == 3
    assert finished["answer"].startswith("[m") and "careful, complete answer" in finished["answer"]


def test_a_budget_reached_before_the_presentation_shows_the_chosen_answer(tmp_path):
    with FakeProvider() as fake:
        code, events, _ = run(tmp_path, fake.base_url, orchestrator={"max_tokens": 1300})
    finished = events[-1]
    assert code == 5 and finished["status"] == "budget"
    assert finished["winner"] and "the selected answer is shown as is" in finished["reason"]
    assert not any(e["type"] == "final_text" for e in events)
    assert finished["answer"] == next(
        e["content"]
        for e in events
        if e["type"] == "answer_published" and e["agent"] == finished["winner"]
    )


def test_a_budget_too_small_for_any_call_makes_none(tmp_path):
    with FakeProvider() as fake:
        code, events, _ = run(tmp_path, fake.base_url, "--max-tokens", "10")
        assert fake.requests == []
    assert code == 5 and events[-1]["status"] == "budget" and events[-1]["answer"] == ""


def test_a_cost_budget_on_unpriced_models_warns_that_it_cannot_count_them(tmp_path):
    with FakeProvider() as fake:
        code, events, err = run(tmp_path, fake.base_url, "--max-cost", "0.01")
    assert code == 0 and events[-1]["status"] == "ok"
    assert err.count("the cost budget cannot count the calls of a0, a1, a2") == 1


@pytest.mark.parametrize("flag", [["--max-tokens", "0"], ["--max-cost", "-1"]])
def test_a_budget_that_is_not_positive_is_a_config_error(tmp_path, flag):
    with FakeProvider() as fake:
        code, _, err = run(tmp_path, fake.base_url, *flag)
        assert fake.requests == []
    assert code == 1 and flag[0] in err


def test_the_cost_limit_counts_the_next_call():
    budget = Budget(max_cost_usd=0.10)
    spent = Spend(Usage(1000, 100), cost_usd=0.08)
    assert budget.refusal(spent, Usage(500, 0), 0.01) is None
    assert "cost budget reached: $0.0800 spent" in (
        budget.refusal(spent, Usage(500, 0), 0.03) or ""
    )
    assert not Budget() and Budget(max_tokens=5)


def test_the_status_line_shows_spend_against_the_budget():
    model = ViewModel("q")
    model.apply(
        ev.RunStarted(
            question="q", agents=("a",), labels={"a": "agent1"}, max_tokens=50_000, max_cost=0.5
        )
    )
    model.apply(ev.UsageReported(agent="a", usage=Usage(1500, 301), cost_usd=0.0012))
    assert "tokens 1,801/50.0k" in totals_text(model)
    assert "est. $0.0012/$0.50" in totals_text(model)
