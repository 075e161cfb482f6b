"""A person's time to answer an approval is not the tool's time: `run_round` asks
`Guarded.authorize` before the call's timeout starts, so a slow answer still runs the tool,
while the tool itself stays bounded. Any failure of the check is a refusal."""

from __future__ import annotations

import asyncio

from perm_helpers import Scripted, engine

from massgen.coordination.tool_round import ToolBounds, run_round
from massgen.core.toolbox import Permit, ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.approval import ApprovalRequest, Choice
from massgen.permissions.guarded import Guarded
from massgen.permissions.ledger import read
from massgen.permissions.risk import Zones
from massgen.testing.tools import InProcessTools

TINY = ToolBounds(timeout_seconds=0.05)
CTX = ToolContext(agent="alice")


class Slow(Scripted):
    """A person who takes `seconds` (far longer than the tool's timeout) to answer."""

    def __init__(self, seconds: float, *answers: Choice) -> None:
        super().__init__(*answers)
        self.seconds = seconds

    async def ask(self, request: ApprovalRequest) -> Choice:
        await asyncio.sleep(self.seconds)
        return await super().ask(request)


class Silent(Scripted):
    async def ask(self, request: ApprovalRequest) -> Choice:
        await asyncio.Event().wait()  # never answers
        raise AssertionError


def toolbox(nap: float = 0.0) -> InProcessTools:
    async def mark(text: str) -> str:
        await asyncio.sleep(nap)
        return f"marked {text}"

    return InProcessTools().add("mark", mark)


def guarded(tmp_path, box, approver, **options) -> Guarded:
    return Guarded(box, engine(tmp_path, approver=approver, **options), lambda _: Zones())


def mark(n: int = 1) -> ToolCall:
    return ToolCall(f"c{n}", "mark", '{"text": "x"}')


async def test_a_slow_answer_still_runs_the_tool(tmp_path):
    box = toolbox()
    approver = Slow(0.3, Choice.ONCE)  # six times the tool's timeout
    [result] = await run_round(
        guarded(tmp_path, box, approver), [mark()], CTX, TINY, lambda _: None
    )
    assert (result.is_error, result.content) == (False, "marked x")
    assert len(approver.asked) == 1 and len(box.calls_of("mark")) == 1
    [record] = read(tmp_path / "log" / "permissions.jsonl")
    assert (record["decision"], record["operator"], record["choice"]) == ("allow", "human", "once")


async def test_the_tool_itself_is_still_bounded_by_its_timeout(tmp_path):
    box = toolbox(nap=5)
    gate = guarded(tmp_path, box, Slow(0.2, Choice.ONCE))
    [result] = await run_round(gate, [mark()], CTX, TINY, lambda _: None)
    assert result.is_error and "timed out after 0.05s" in result.content


async def test_a_slow_deny_runs_nothing(tmp_path):
    box = toolbox()
    [result] = await run_round(
        guarded(tmp_path, box, Slow(0.2)), [mark()], CTX, TINY, lambda _: None
    )
    assert result.is_error and "refused by the permission engine" in result.content
    assert box.calls_of("mark") == []


async def test_an_approver_that_never_answers_is_a_deny_at_the_engines_backstop(tmp_path):
    box = toolbox()
    gate = guarded(tmp_path, box, Silent(), approval_seconds=0.1)
    [result] = await run_round(gate, [mark()], CTX, ToolBounds(), lambda _: None)
    assert result.is_error and "no answer within 0.1s" in result.content
    assert box.calls_of("mark") == []
    [record] = read(tmp_path / "log" / "permissions.jsonl")
    assert record["decision"] == "deny" and record["rule"] == "approval timeout"


async def test_a_failing_authorize_is_a_refusal(tmp_path):
    box = toolbox()
    gate = guarded(tmp_path, box, Scripted(Choice.ONCE))

    async def broken(call, ctx):
        raise RuntimeError("boom")

    gate.authorize = broken  # type: ignore[method-assign]
    [result] = await run_round(gate, [mark()], CTX, TINY, lambda _: None)
    assert result.is_error and "permission check failed (RuntimeError: boom)" in result.content
    assert box.calls_of("mark") == []


async def test_a_permit_runs_its_call_once_and_nothing_else_runs_without_one(tmp_path):
    box = toolbox()
    approver = Scripted(Choice.ONCE, Choice.DENY)
    gate = guarded(tmp_path, box, approver)
    call = mark()
    permit = await gate.authorize(call, CTX)
    assert isinstance(permit, Permit) and permit.call == call
    assert (await permit.run(CTX)).content == "marked x"
    assert (await permit.run(CTX)).is_error  # a permit is spent once used
    # Without a permit, the same call is decided again (and denied), not run.
    assert (await gate.call(call, CTX)).is_error
    assert len(box.calls_of("mark")) == 1 and len(approver.asked) == 2


async def test_an_allowed_call_is_asked_once_per_round(tmp_path):
    box = toolbox()
    approver = Scripted(Choice.ONCE, Choice.ONCE)
    gate = guarded(tmp_path, box, approver)
    results = await run_round(gate, [mark(1), mark(2)], CTX, TINY, lambda _: None)
    assert [r.content for r in results] == ["marked x", "marked x"]
    assert len(approver.asked) == 2 and len(read(tmp_path / "log" / "permissions.jsonl")) == 2
