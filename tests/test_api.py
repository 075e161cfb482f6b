"""The Python API: massgen.run() returns a typed result; massgen.stream() yields events."""

from __future__ import annotations

import pytest

import massgen
from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.testing.fake_provider import FakeProvider

pytestmark = pytest.mark.usefixtures("in_tmp")


def team(base_url: str, n: int = 3) -> dict:
    backend = {"type": "chatcompletion", "base_url": base_url}
    return {"agents": [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(n)]}


def test_run_returns_answer_winner_votes_usage_and_log_dir():
    with FakeProvider() as fake:
        result = massgen.run("What is 2+2?", config=team(fake.base_url))
    assert result.ok and result.status == "ok"
    assert result.answer.startswith("Final answer from")
    assert result.winner in {"a0", "a1", "a2"}
    assert result.winner_label and result.winner_label.startswith("agent")
    assert len(result.votes) == 3 and all(v.target == result.winner for v in result.votes)
    assert result.total_usage.input_tokens > 0
    assert result.log_dir is not None and (result.log_dir / "status.json").exists()


def test_run_without_logs_writes_nothing(tmp_path):
    with FakeProvider() as fake:
        result = massgen.run("q", config=team(fake.base_url, 2), logs=False)
    assert result.log_dir is None and not (tmp_path / ".massgen").exists()


async def test_stream_yields_the_events_of_the_run_in_order():
    with FakeProvider() as fake:
        seen = [e async for e in massgen.stream("q", config=team(fake.base_url), logs=False)]
    assert isinstance(seen[0], ev.RunStarted)
    assert isinstance(seen[-1], ev.RunFinished) and seen[-1].outcome.status == "ok"
    assert sum(isinstance(e, ev.VoteCast) for e in seen) == 3
    published = [e for e in seen if isinstance(e, ev.AnswerPublished)]
    assert published and all(e.label.startswith("agent") for e in published)


def test_bad_config_dict_raises_config_error():
    with pytest.raises(ConfigError) as error:
        massgen.run("q", config={"agents": [{"id": "x", "backend": {"type": "nope"}}]})
    assert "agents[0].backend.type" in str(error.value)


def test_a_cooperative_team_makes_no_wasted_calls():
    # Each agent answers once and votes once, and the winner presents: 2n+1 calls. An agent
    # that answered first waits for its peers' first answers instead of voting too early.
    with FakeProvider(latency=0.05) as fake:
        result = massgen.run("q", config=team(fake.base_url, 4), logs=False)
    assert result.status == "ok"
    assert len(fake.requests) == 2 * 4 + 1


async def test_run_inside_an_event_loop_points_to_arun():
    with pytest.raises(RuntimeError, match=r"massgen\.arun"):
        massgen.run("q", config={"agents": []})
    with FakeProvider() as fake:
        result = await massgen.arun("q", config=team(fake.base_url, 2), logs=False)
    assert result.ok
