"""Program-of-thought for models without tool calling: their Python blocks really run.

Small coder models (the offline Qwen2.5-Coder team) answer arithmetic by writing Python,
then write the output they imagine that code prints, often wrongly. With
`orchestrator.run_python_blocks`, the first reply stops where its imagined output would
begin (the stop sequence "```output"), the code of its ```python blocks runs once in the
command sandbox (`workspace/python_run.py`), and the model reads the real output and
finishes. The turn's text is the first reply, the real output, then the second reply.

One run per reply, bounded in time, memory and output; the single-call baselines of
`massgen batch` get the same, so a gain is the team's and not the tool's.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace

from massgen.core import events as ev
from massgen.core.types import GenerationParams
from massgen.workspace.python_run import PythonRun, run_python

Ask = Callable[[str], Awaitable[str]]  # one more model call, after this user message
Emit = Callable[[ev.AnyEvent], None]
Runner = Callable[[str], Awaitable[PythonRun]]

# Where a model starts writing the output it imagines its code prints.
OUTPUT_FENCE = "```output"
_BLOCK = re.compile(r"```(?:python|py)[ \t]*\n(.*?)(?:```|\Z)", re.S)
MAX_CODE_CHARS = 20_000


# What the model is told, in its system prompt: a tool it does not know of goes unused.
# Measured: "you can run Python" in the system prompt left the 1.5B coder answering in
# prose (0 of 14 GSM8K replies wrote code), and so did this text there; it goes after the
# task in the user's message instead.
NOTE = (
    "Solve this by writing a ```python block that computes the answer and prints it. "
    "It will be run, and you will read its real output before you give your final answer."
)


def with_note(task: str) -> str:
    """The task as the model reads it with program-of-thought on: the note follows it, in
    the user's message (a system note went unheeded by the 1.5B coder)."""
    return f"{task}\n\n{NOTE}"


def stopping(params: GenerationParams) -> GenerationParams:
    """`params` that also stop where an imagined output block would begin."""
    stop = tuple(params.stop or ())
    return params if OUTPUT_FENCE in stop else replace(params, stop=(*stop, OUTPUT_FENCE))


def code_of(text: str) -> str | None:
    """The code of every ```python block in `text`, in order (later blocks may use what
    earlier ones define); None when there is none."""
    blocks = [block.strip() for block in _BLOCK.findall(text) if block.strip()]
    code = "\n\n".join(blocks)
    return code[:MAX_CODE_CHARS] if code else None


def output_note(run: PythonRun) -> str:
    """What the model reads after its code ran."""
    return (
        f"Your Python code ran. Its real output:\n```output\n{run.report()}\n```\n"
        "Using this output, finish your answer: state the result clearly."
    )


def joined(first: str, run: PythonRun, second: str) -> str:
    """The turn's text: the reply with its code, the real output, then the rest."""
    head = first.rstrip()
    if head.endswith(OUTPUT_FENCE):  # a server may return the stop sequence
        head = head[: -len(OUTPUT_FENCE)].rstrip()
    return f"{head}\n```output\n{run.report()}\n```\n{second.strip()}".strip()


async def finished(
    text: str, code: str, ask: Ask, emit: Emit, agent: str, *, run: Runner = run_python
) -> str:
    """`text` with its code's real output and the model's reply to it (`joined`). The run
    is shown and journalled as a `python` tool call of the agent."""
    call_id = f"py_{uuid.uuid4().hex[:12]}"
    emit(ev.ToolCallStarted(agent=agent, call_id=call_id, name="python", arguments=code))
    result = await run(code)
    report = result.report()
    emit(
        ev.ToolCallFinished(
            agent=agent, call_id=call_id, name="python", result=report, ok=result.ok
        )
    )
    second = await ask(output_note(result))
    return joined(text, result, second)
