"""Program-of-thought for free-text models: a ```python block really runs, the model reads
its real output, and the answer carries it; the single-call baselines of a batch do the
same, so a gain is the team's and not the tool's."""

from __future__ import annotations

from scripted import ScriptedBackend, text

from massgen.batch.work import _call
from massgen.config.schema import OrchestratorConfig
from massgen.coordination.agent import Member
from massgen.coordination.orchestrator import Orchestrator
from massgen.coordination.python_blocks import NOTE, OUTPUT_FENCE, code_of
from massgen.core import events as ev
from massgen.core.types import GenerationParams

CODE = "```python\nmay = 48 / 2\nprint(48 + may)\n```\n"


async def test_a_python_block_runs_and_the_answer_has_its_real_output():
    solver = ScriptedBackend(text("Let me compute.\n" + CODE), text("So she sold 72 clips."))
    member = Member(id="solo", backend=solver, structured_actions=True)
    events: list = []
    settings = OrchestratorConfig(run_python_blocks=True)
    outcome = await Orchestrator([member], settings, emit=events.append).run("How many clips?")

    first, second = solver.requests
    # Asked for the program after the task, as the baseline is.
    assert first.messages[-1].content == f"How many clips?\n\n{NOTE}"
    assert OUTPUT_FENCE in first.params.stop  # it never writes an imagined output
    assert "Its real output:\n```output\n72.0\n```" in second.messages[-1].content
    assert (
        outcome.answer
        == f"Let me compute.\n{CODE.rstrip()}\n```output\n72.0\n```\nSo she sold 72 clips."
    )
    started = [e for e in events if isinstance(e, ev.ToolCallStarted)]
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [e.name for e in started] == ["python"] and "print(48 + may)" in started[0].arguments
    assert finished[0].ok and finished[0].result == "72.0"


async def test_off_by_default_and_a_reply_without_code_is_one_call():
    solver = ScriptedBackend(text(CODE + "```output\n70\n```\nSo 70."))
    member = Member(id="solo", backend=solver, structured_actions=True)
    outcome = await Orchestrator([member], OrchestratorConfig()).run("How many clips?")
    assert len(solver.requests) == 1 and outcome.answer.endswith("So 70.")

    plain = ScriptedBackend(text("48 + 24 = 72."))
    member = Member(id="solo", backend=plain, structured_actions=True)
    settings = OrchestratorConfig(run_python_blocks=True)
    outcome = await Orchestrator([member], settings).run("How many clips?")
    assert len(plain.requests) == 1 and outcome.answer == "48 + 24 = 72."


async def test_the_single_call_baseline_gets_the_same_program_of_thought():
    solver = ScriptedBackend(text(CODE), text("So 72."))
    member = Member(id="alone", backend=solver, structured_actions=True)
    answer, usage = await _call(member, "How many clips?", GenerationParams(), python=True)
    assert [m.content for m in solver.requests[0].messages] == [f"How many clips?\n\n{NOTE}"]
    assert "```output\n72.0\n```\nSo 72." in answer
    assert usage.total_tokens == 60  # both calls counted (30 each)


def test_code_is_every_python_block_in_order_and_none_without_one():
    reply = "```python\nx = 2\n```\ntext\n```py\nprint(x * 3)\n```"
    assert code_of(reply) == "x = 2\n\nprint(x * 3)"
    assert code_of("```python\nprint(1)") == "print(1)"  # cut by the stop sequence
    assert code_of("no code, just 72") is None
