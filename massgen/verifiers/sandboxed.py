"""One program run in the command sandbox for a check, as `execute_command` runs commands
(`workspace/commands.py`): bubblewrap or Landlock, no network, an environment without
secrets, a wall-clock timeout that kills everything it started, bounded output, bounded
processes and memory.

Its only writable places are a fresh scratch directory (holding `files`) and a private
tmp dir, both removed after the run. `cwd`, when given (a copy of the answer's
workspace), is where it starts, read-only. No sandbox on this machine: nothing runs, and
the caller gets why (a check is then `unchecked`, never run bare).
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from massgen.permissions.sandbox import Confinement, NoSandbox, Sandbox, select_sandbox
from massgen.workspace.runner import Finished, Limits, command_environment, run_command

# The first lines a Python harness runs in the sandbox, once it has set `memory` (bytes of
# address space) and `cpu` (seconds): no file over 1 MiB, and no new process.
RLIMITS = """\
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
"""
MAX_OUTPUT_BYTES = 64 * 1024  # read from the program; the check keeps less
MAX_PROCESSES = 64
MAX_MEMORY_MB = 2048


@functools.cache
def sandbox() -> Sandbox | NoSandbox:
    """The best sandbox this machine has (once per process: it probes)."""
    return select_sandbox("auto", network=False)


async def run_confined(
    argv: Sequence[str],
    *,
    timeout_seconds: float,
    stdin: bytes | None = None,
    files: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    file_vars: Mapping[str, str] | None = None,
    memory_mb: int = MAX_MEMORY_MB,
) -> Finished | str:
    """How `argv` ended, or why it did not start (no sandbox, no such program).
    `files`: name -> text, written into the scratch directory; `file_vars`: variable ->
    one of those names, set in the (scrubbed) environment to the file's path."""
    chosen = sandbox()
    if isinstance(chosen, NoSandbox):
        return chosen.reason
    with (
        tempfile.TemporaryDirectory(prefix="massgen-check-", ignore_cleanup_errors=True) as work,
        tempfile.TemporaryDirectory(prefix="massgen-tmp-", ignore_cleanup_errors=True) as tmp,
    ):
        scratch = Path(work)
        for name, text in (files or {}).items():
            (scratch / name).write_text(text, encoding="utf-8")
        start = cwd if cwd is not None else scratch
        confinement = Confinement(
            scratch,
            Path(tmp),
            readable=(cwd,) if cwd is not None else (),
            max_processes=MAX_PROCESSES,
            max_memory_bytes=memory_mb * 1024 * 1024,
            cwd=start,
        )
        try:
            wrapped = chosen.wrap(argv, confinement)
        except (OSError, RuntimeError, ValueError) as error:
            return f"could not set up the sandbox ({error})"
        paths = {var: str(scratch / name) for var, name in (file_vars or {}).items()}
        variables = {**command_environment(os.environ), **paths, **wrapped.env}
        limits = Limits(timeout_seconds, MAX_OUTPUT_BYTES)
        try:
            return await run_command(wrapped.argv, start, limits, variables, stdin)
        except OSError as error:
            return f"could not start: {error}"
