"""`python -m bench.sandbox`: what the command sandbox adds to one `execute_command` call,
written into the sandbox section of `docs/benchmarks.md` (between its markers;
`python -m bench` keeps the section).

    python -m bench.sandbox            # 30 calls per sandbox
    python -m bench.sandbox --quick    # 5 calls each, printed instead of written

Each sample is one tool call of `true` through `CommandToolbox.call`, as an agent makes
it (private tmp dir created and removed, the sandbox's argv, the runner's process group
and output capture): bare (the runner alone, no pid namespace, no limits: the baseline),
`none` (a pid namespace and limits, no confinement), and each sandbox this machine has.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import report
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.sandbox import Confinement, NoSandbox, Sandbox, Wrapped, select_sandbox
from massgen.workspace.commands import CommandToolbox
from massgen.workspace.runner import Limits

BEGIN, END = "<!-- command sandbox: begin -->", "<!-- command sandbox: end -->"
MODES = ("none", "bubblewrap", "landlock")


def main(argv: list[str] | None = None) -> int:
    runs, quick = report.runs_and_quick(
        argv, "python -m bench.sandbox", 30, 5, "calls", "per sandbox"
    )
    load_before = os.getloadavg()[0]
    timings = {mode: asyncio.run(_calls(sandbox, runs)) for mode, sandbox in _sandboxes()}
    text = render(timings, runs, (load_before, os.getloadavg()[0]))
    report.publish(text, BEGIN, END, quick=quick)
    return 0


@dataclass(frozen=True, slots=True)
class _Bare:
    """The baseline: the command as it is, as the runner alone would start it."""

    name: str = "bare"

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> Wrapped:
        return Wrapped(tuple(argv), {"TMPDIR": str(confinement.tmp)})


def _sandboxes() -> list[tuple[str, Sandbox]]:
    found: list[tuple[str, Sandbox]] = [("bare", _Bare())]
    for mode in MODES:
        sandbox = select_sandbox(mode)  # type: ignore[arg-type]
        if not isinstance(sandbox, NoSandbox):
            found.append((mode, sandbox))
    return found


async def _calls(sandbox: Sandbox, runs: int) -> list[float]:
    box = CommandToolbox(Limits(30), env={"PATH": "/usr/bin:/bin"}, sandbox=sandbox)
    call = ToolCall("b", "execute_command", json.dumps({"command": "true"}))
    seconds = []
    with tempfile.TemporaryDirectory(prefix="massgen-bench-sbx-") as workspace:
        ctx = ToolContext(agent="bench", workspace=Path(workspace))
        await box.call(call, ctx)  # warm: the first call pays for page cache misses
        for _ in range(runs):
            started = time.perf_counter()
            result = await box.call(call, ctx)
            seconds.append(time.perf_counter() - started)
            if not result.content.startswith("exit code 0"):
                raise RuntimeError(f"`true` failed under {sandbox.name}: {result.content}")
    return seconds


def render(timings: dict[str, list[float]], runs: int, load: tuple[float, float]) -> str:
    bare = report.median(timings["bare"])
    rows = [
        [mode, *report.spread([s * 1000 for s in samples], _ms), _ms(1000 * (report.median(samples) - bare))]
        for mode, samples in timings.items()
    ]  # fmt: skip
    return "\n\n".join(
        [
            "## 12. Command sandbox",
            f"Written by `python -m bench.sandbox` on {time.strftime('%Y-%m-%d')}: one "
            f"`execute_command` call of `true`, {runs} times per sandbox (1-minute load "
            f"average {load[0]:.2f} before, {load[1]:.2f} after). `bare` is the runner alone; "
            "the overhead is the median's difference from it.",
            report.table(["sandbox", "median", "min", "max", "overhead"], rows),
            "Every kind gives the command a pid namespace of its own and its process and "
            "memory limits. `none` runs util-linux `unshare --pid --fork --kill-child` and "
            "`prlimit`; bubblewrap builds a mount, pid, ipc and network namespace per call, "
            "then `prlimit`; Landlock starts a Python launcher that makes the pid namespace, "
            "forks, restricts the child (limits, Landlock, seccomp) and execs the shell: "
            "most of its cost is the interpreter's start.",
        ]
    )


def _ms(value: float) -> str:
    return f"{value:.1f} ms"


if __name__ == "__main__":
    raise SystemExit(main())
