"""Runaway guards: a model that writes without acting, repeats a tool call, or loops on a
line is stopped with a reason, corrected once, and failed for the turn the second time."""

from __future__ import annotations

import json

from scripted import ScriptedBackend, answer
from test_tool_loop import calls, echo, solo, tool_messages

from massgen.coordination.runaway import CallWatch, repeated_line
from massgen.core import events as ev
from massgen.core.types import Finish, TextChunk, ToolCall, Usage
from massgen.testing.tools import InProcessTools


class Endless:
    """A stream of prose that never ends on its own; counts the chunks it was read for."""

    def __init__(self, line: str = "", chunk: int = 500) -> None:
        self.line, self.chunk, self.read = line, chunk, 0

    def __iter__(self):
        n = 0
        while True:
            self.read += 1
            n += 1
            yield TextChunk(self.line or f"word {n} " * (self.chunk // 8) + "\n")


def rambling(**kwargs):
    return Endless(**kwargs)


async def test_a_reply_past_the_length_bound_is_cut_corrected_then_failed():
    first, second = rambling(), rambling()
    backend = ScriptedBackend(first, second)
    outcome, events = await solo(backend, InProcessTools(), max_reply_chars=5000)

    assert outcome.status == "failed"
    # Each stream was closed right after it passed the bound: about 5,000 / 500 chunks.
    assert 10 <= first.read <= 12 and 10 <= second.read <= 12
    correction = backend.requests[1].messages[-1]
    assert correction.role == "user" and correction.content.startswith("You were stopped: ")
    assert "characters written without an action (limit 5,000)" in correction.content
    rejected = [e for e in events if isinstance(e, ev.ActionRejected)]
    assert [e.attempt for e in rejected] == [1, 2]
    (failed,) = [e for e in events if isinstance(e, ev.AgentFailed)]
    assert failed.error.startswith("stopped: ") and "without an action" in failed.error
    # The cut calls were billed as estimated usage, not as nothing.
    usage = [e.usage for e in events if isinstance(e, ev.UsageReported)]
    assert len(usage) == 2 and all(u.estimated and u.output_tokens > 1000 for u in usage)


async def test_one_correction_is_enough_for_a_model_that_listens():
    backend = ScriptedBackend(rambling(), answer("short and done"))
    outcome, _ = await solo(backend, InProcessTools(), max_reply_chars=5000)
    assert outcome.status == "ok" and outcome.answer == "short and done"


async def test_a_looping_line_is_stopped_before_the_length_bound():
    loop = rambling(line="I will now think about the problem again.\n")
    backend = ScriptedBackend(loop, answer("ok"))
    outcome, events = await solo(backend, InProcessTools(), max_repeated_lines=10)
    assert outcome.answer == "ok"
    (rejected,) = [e for e in events if isinstance(e, ev.ActionRejected)]
    assert "the same line written" in rejected.reason
    assert loop.read < 200  # ~2 KiB of it, far from the 60,000-character bound


async def test_the_same_tool_call_repeated_is_refused_then_fails_the_turn():
    tools = InProcessTools().add("lookup", echo)
    same = lambda: calls(("lookup", {"q": "x", "n": 1}))  # noqa: E731
    reordered = [
        TextChunk("again. "),
        ToolCall("c1", "lookup", json.dumps({"n": 1, "q": "x"})),  # same arguments, other order
        Usage(50, 10),
        Finish("tool_calls"),
    ]
    backend = ScriptedBackend(same(), same(), reordered, same())
    outcome, events = await solo(backend, tools, max_identical_tool_calls=3)

    assert len(tools.calls_of("lookup")) == 2  # the third and fourth never ran
    assert tool_messages(backend.requests[3])["c1"].startswith("Error: You were stopped: ")
    assert outcome.status == "failed"
    (failed,) = [e for e in events if isinstance(e, ev.AgentFailed)]
    assert "`lookup` called 4 times with the same arguments" in failed.error


async def test_different_arguments_are_not_repeats():
    tools = InProcessTools().add("lookup", echo)
    steps = [calls(("lookup", {"q": str(i)})) for i in range(5)]
    outcome, _ = await solo(ScriptedBackend(*steps, answer("done")), tools)
    assert outcome.answer == "done" and len(tools.calls_of("lookup")) == 5


def test_repeated_line_ignores_case_spacing_and_short_lines():
    text = "\n".join(["The  Same line, again!", "the same LINE, again!"] * 5 + ["-"] * 50)
    assert repeated_line(text, 10) is not None
    assert repeated_line(text, 11) is None
    assert repeated_line("\n".join(f"row {i}: a distinct value" for i in range(100)), 10) is None


def test_call_watch_counts_by_name_and_arguments():
    watch = CallWatch(limit=2)
    assert watch.repeats(ToolCall("1", "a", '{"x": 1}')) is None
    assert watch.repeats(ToolCall("2", "b", '{"x": 1}')) is None
    assert watch.repeats(ToolCall("3", "a", '{ "x" : 1 }')) is not None
