"""The fault catalogue end to end: every fault, on every SDK wire's fake, in every phase,
through the `massgen` command.

A team of three on one wire; one member's provider misbehaves while that member answers,
while it votes, or while the winner presents. Whatever the fault, the team finishes with
the right status and exit code, the failure is reported in the provider's own words, and
nothing decided is lost: every answer and vote of the healthy members stands, and the
final answer is one the team chose.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from test_wire_contract import WIRE_FAKES, WireFake

from massgen.cli import main
from massgen.core import errors
from massgen.testing import Fault, Reply, cooperative_agent, fake_gemini, fake_xai
from massgen.testing.policy import enums

pytestmark = pytest.mark.usefixtures("in_tmp")

# The fakes of the HTTP wires show policies a Chat Completions view of each request; the
# Gemini and xAI fakes show the request itself, and say how to view it.
VIEWS = {"gemini": fake_gemini.openai_view, "grok": fake_xai.openai_view}
BROKEN = "broken"
STALL_S = 0.4  # the members' read timeout is shorter than this
PHASES = ("answering", "voting", "presenting")


def phase_of(request: dict[str, Any]) -> str:
    """What the member is being asked for, read from the tools it is offered."""
    tools = {t["function"]["name"]: t["function"] for t in request.get("tools") or []}
    if "vote" in tools and any(enums(tools["vote"].get("parameters") or {})):
        return "voting"
    if "new_answer" in tools:
        return "answering"
    return "presenting"


@dataclass(frozen=True)
class Case:
    """A fault, and what the run makes of it."""

    name: str
    # The misbehaving reply, from the wire and the reply a healthy member would give.
    reply: Callable[[WireFake, Reply], Reply]
    once: bool = False  # the provider recovers after one bad reply: a retry succeeds


def _with(fault: Fault) -> Callable[[WireFake, Reply], Reply]:
    return lambda wire, healthy: dataclasses.replace(healthy, fault=fault)


def _context_too_long(wire: WireFake, healthy: Reply) -> Reply:
    fault = next(
        (f for f, error, _ in wire.faults if error is errors.ContextTooLong),
        Fault.http(400, "prompt is too long: 210000 tokens > 200000 maximum"),
    )
    return Reply(fault=fault)


CASES = (
    Case("429 with Retry-After", lambda w, h: Reply(fault=w.rate_limits[0](0.05)), once=True),
    Case("500", lambda w, h: Reply(fault=w.server_error())),
    Case("timeout before the first byte", _with(Fault(stall_seconds=STALL_S * 3))),
    Case("stall mid-stream", _with(Fault(stall_seconds=STALL_S * 3, at_chunk=1))),
    Case("drop mid-stream", lambda w, h: dataclasses.replace(h, fault=Fault(drop_after_chunks=2))),
    Case("malformed chunk", lambda w, h: dataclasses.replace(h, fault=w.malformed.fault)),
    Case("auth failure", lambda w, h: Reply(fault=w.unauthorized("Incorrect API key provided"))),
    Case("context too long", _context_too_long),
    Case("empty response", lambda w, h: Reply(text="")),
)


class Provider:
    """Every member cooperates, except BROKEN in `phase` (in "presenting", whoever
    presents), which gets the case's reply: once, or every time."""

    def __init__(self, wire: WireFake, case: Case, phase: str) -> None:
        self.wire, self.case, self.phase = wire, case, phase
        self.misbehaved = 0

    def __call__(self, sent: dict[str, Any]) -> Reply:
        request = VIEWS.get(self.wire.type, lambda body: body)(sent)
        healthy = cooperative_agent(request)
        phase = phase_of(request)
        targeted = request.get("model") == BROKEN or phase == "presenting"
        if phase != self.phase or not targeted or (self.case.once and self.misbehaved):
            return healthy
        self.misbehaved += 1
        return self.case.reply(self.wire, healthy)


def team(wire: WireFake, base_url: str) -> dict[str, Any]:
    backend = {
        "type": wire.type,
        "base_url": base_url,
        "api_key": "sk-fault-matrix",
        "request_timeout_seconds": STALL_S,
        "max_retries": 1,
    }
    models = ("healthy-a", "healthy-b", BROKEN)
    agents = [{"id": f"agent_{m}", "backend": {**backend, "model": m}} for m in models]
    return {"agents": agents, "orchestrator": {"max_invalid_action_retries": 1}}


def run_cli(config: dict[str, Any], tmp_path) -> tuple[int, list[dict[str, Any]], str]:
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(config))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--config", str(path), "--stream-events", "--no-logs", "q"])
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    return code, events, err.getvalue()


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("wire", WIRE_FAKES, ids=[w.wire.name for w in WIRE_FAKES])
def test_the_team_finishes_and_keeps_what_was_decided(wire, case, phase, tmp_path):
    provider = Provider(wire, case, phase)
    with wire.fake(provider) as fake:
        code, events, err = run_cli(team(wire, fake.base_url), tmp_path)
    assert provider.misbehaved, "the fault never fired: the case tests nothing"
    assert "Traceback" not in err
    kinds = [e["type"] for e in events]
    finished = events[-1]
    assert kinds[0] == "run_started" and finished["type"] == "run_finished"
    assert code == 0, (finished, err)

    failed = {e["agent"]: e for e in events if e["type"] == "agent_failed"}
    answers = [e for e in events if e["type"] == "answer_published"]
    votes = [e for e in events if e["type"] == "vote_cast"]
    healthy_answers = {e["agent"] for e in answers} - {f"agent_{BROKEN}"}
    # The healthy members always answer, and always vote.
    assert healthy_answers == {"agent_healthy-a", "agent_healthy-b"}
    assert {"agent_healthy-a", "agent_healthy-b"} <= {e["agent"] for e in votes}
    if case.once:  # a retry got past it
        assert not failed, failed
        assert len(answers) == 3 and len(votes) == 3
        assert finished["status"] == "ok"
    elif phase == "presenting":
        # The team had decided; the winner's own answer is shown, and the reason says why.
        assert not failed, failed
        assert len(answers) == 3 and len(votes) == 3
        winner_answer = next(e for e in answers if e["agent"] == finished["winner"])
        assert finished["answer"] == winner_answer["content"] or case.name == "empty response"
        if case.name != "empty response":
            assert finished["status"] == "degraded"
            assert "the final presentation failed" in finished["reason"]
    else:
        assert list(failed) == [f"agent_{BROKEN}"], kinds
        assert failed[f"agent_{BROKEN}"]["error"] and finished["status"] == "degraded"
        if phase == "voting":  # its answer, decided before the fault, still stands
            assert f"agent_{BROKEN}" in {e["agent"] for e in answers}
    assert "A careful, complete answer" in finished["answer"], finished
