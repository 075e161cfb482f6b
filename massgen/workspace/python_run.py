"""Run a snippet of Python in the command sandbox, bounded: `await run_python(code)`.

For program-of-thought: a model that writes its arithmetic as Python gets the real output
instead of the one it would imagine. The snippet runs as `python3 -I snippet.py` in a
fresh temporary directory that is its whole writable world, inside the sandbox commands
use (`permissions/sandbox.py`: no network, secrets hidden, its own pid namespace), with the
allowlisted environment, a wall-clock timeout, a process and memory bound, and its output
cut to a size. It never raises for what the code does; `refused` says why it did not run.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from massgen.permissions.sandbox import Confinement, NoSandbox, Sandbox, select_sandbox
from massgen.workspace.runner import Limits, command_environment, run_command

TIMEOUT_SECONDS = 10.0
MAX_OUTPUT_BYTES = 4000
MAX_PROCESSES = 16
MAX_MEMORY_MB = 512


@dataclass(frozen=True, slots=True)
class PythonRun:
    output: str
    exit_code: int = 0
    timed_out: bool = False
    refused: str | None = None  # it did not run: why

    @property
    def ok(self) -> bool:
        return self.refused is None and not self.timed_out and self.exit_code == 0

    def report(self) -> str:
        """What the model reads: the output, and how the run ended when not cleanly."""
        if self.refused is not None:
            return f"(not run: {self.refused})"
        text = self.output.rstrip() or "(no output: print what you want to see)"
        if self.timed_out:
            return f"{text}\n(stopped: it ran past {TIMEOUT_SECONDS:g} s)"
        if self.exit_code != 0:
            return f"{text}\n(exit code {self.exit_code})"
        return text


async def run_python(
    code: str,
    *,
    sandbox: Sandbox | NoSandbox | None = None,
    timeout_seconds: float = TIMEOUT_SECONDS,
    max_output_bytes: int = MAX_OUTPUT_BYTES,
) -> PythonRun:
    """Run `code` once, confined and bounded (see the module docstring)."""
    chosen = select_sandbox("auto") if sandbox is None else sandbox
    if isinstance(chosen, NoSandbox):
        return PythonRun("", refused=chosen.reason)
    with tempfile.TemporaryDirectory(prefix="massgen-py-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        (root / "tmp").mkdir()
        (root / "snippet.py").write_text(code, encoding="utf-8")
        confinement = Confinement(
            root,
            root / "tmp",
            max_processes=MAX_PROCESSES,
            max_memory_bytes=MAX_MEMORY_MB * 1024 * 1024,
        )
        try:
            wrapped = chosen.wrap([sys.executable, "-I", "snippet.py"], confinement)
        except (OSError, RuntimeError, ValueError) as error:
            return PythonRun("", refused=f"could not set up the sandbox ({error})")
        env = {**command_environment(os.environ), **wrapped.env}
        limits = Limits(timeout_seconds, max_output_bytes)
        try:
            done = await run_command(wrapped.argv, root, limits, env)
        except OSError as error:
            return PythonRun("", refused=f"could not start Python ({error})")
    return PythonRun(done.output, done.exit_code, done.timed_out)
