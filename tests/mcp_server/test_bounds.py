"""The server's bounds on a run, in process: slots, the cost cap, the deadline."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from mcp_fixture import write_team

from massgen.mcp_server.asking import Asker, Limits, Refused
from massgen.serve.teams import Teams
from massgen.testing.fake_provider import FakeProvider, Fault, Reply

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("in_tmp")]


async def nothing(line: str) -> None:
    return None


def test_the_cost_cap_is_the_smallest_of_caller_server_and_config(tmp_path: Path) -> None:
    team = write_team(tmp_path / "team.yaml", "http://127.0.0.1:9/v1")
    asker = Asker(Teams(str(team)), Limits(max_cost=2.0))
    capped = lambda cost: asker.prepare("q", None, (), cost)[0].config.orchestrator.max_cost  # noqa: E731
    assert capped(None) == 2.0
    assert capped(100.0) == 2.0  # a caller cannot raise the server's cap
    assert capped(0.25) == 0.25
    with pytest.raises(Refused, match="more than 0"):
        capped(-1.0)


async def test_a_call_past_the_slots_is_refused_once_the_wait_is_over(tmp_path: Path) -> None:
    with FakeProvider(lambda request: Reply(fault=Fault(stall_seconds=30))) as stalled:
        team = write_team(tmp_path / "team.yaml", stalled.base_url, n=1)
        asker = Asker(Teams(str(team)), Limits(max_concurrent=1, slot_wait_s=0.5))
        first = asyncio.create_task(asker.ask(*asker.prepare("q", None), nothing))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        with pytest.raises(Refused, match="all 1 run slots stayed busy"):
            await asker.ask(*asker.prepare("q", None), nothing)
        assert time.monotonic() - started < 2
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first


async def test_the_deadline_ends_a_stalled_run_with_status_timeout(tmp_path: Path) -> None:
    with FakeProvider(lambda request: Reply(fault=Fault(stall_seconds=30))) as stalled:
        team = write_team(tmp_path / "team.yaml", stalled.base_url, n=1)
        asker = Asker(Teams(str(team)), Limits(timeout_s=1.0))
        started = time.monotonic()
        result = await asker.ask(*asker.prepare("q", None), nothing)
    assert str(result.status) == "timeout"
    assert time.monotonic() - started < 10
