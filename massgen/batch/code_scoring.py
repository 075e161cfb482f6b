"""The `code` scorer: an answer's Python function against the task's hidden tests, run in
the command sandbox.

The answer's code is its last ```python block (or last ``` block; without one, the whole
answer). The reference is the hidden tests: Python statements (`assert f(2) == 4`) run in
the namespace the code defined. Score 1.0 when the code and every test run to the end,
else 0.0: an exception, a failed assert, a timeout, a memory or output limit.

Each check runs as `execute_command` runs a command (`permissions/sandbox.py`,
`workspace/runner.py`): bubblewrap or Landlock, no network, a fresh temporary directory as
its only writable place, an environment without secrets, a wall-clock timeout that kills
the process group, bounded output; and inside, before the answer's code runs, limits on
address space, CPU time, file size and processes that it cannot raise again. No sandbox
on the machine: the scorer refuses to run answers (ConfigError), it never runs them bare.

What self-consistency votes on (`extract`): the code's syntax tree (`ast.dump`, without
docstrings, variables renamed in order of appearance), so samples that differ only in
layout, comments, docstrings or variable names vote together; code that does not parse
does not vote. Running samples on the task's public examples
would group more of them, but `extract` sees the answer alone, not the task.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import secrets
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from massgen.core.errors import ConfigError
from massgen.verifiers.sandboxed import RLIMITS

if TYPE_CHECKING:
    from massgen.permissions.sandbox import Sandbox
    from massgen.workspace.runner import Finished

TIMEOUT_SECONDS = 10.0
MEMORY_BYTES = 512 * 2**20  # address space of the process running the answer
MAX_OUTPUT_BYTES = 16 * 1024  # of what the run prints, kept for the verdict
MAX_CODE_CHARS = 200_000  # a longer answer is not run

# A fence, its language, the rest of its line (a small model may go on with code there),
# and the block up to the closing fence or, cut off at the token limit, the end.
_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)([^\n]*)\n(.*?)(?:```|\Z)", re.DOTALL)

# Runs inside the sandbox: the limits first, then the answer, then the tests; the marker
# (a nonce from argv) is printed only if all of that finished.
HARNESS = (
    """\
import resource, sys
memory, cpu = int(sys.argv[2]), int(sys.argv[3])
"""
    + RLIMITS
    + """\
namespace = {"__name__": "solution"}
exec(compile(open("solution.py").read(), "solution.py", "exec"), namespace)
exec(compile(open("tests.py").read(), "tests.py", "exec"), namespace)
print(sys.argv[1])
"""
)


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool
    output: str
    timed_out: bool = False


def code_of(answer: str) -> str:
    """The last ```python block of the answer (else its last ``` block, else the answer);
    a last block without its closing fence runs to the end."""
    blocks = [
        (lang.lower(), f"{rest.strip()}\n{body}") for lang, rest, body in _BLOCK.findall(answer)
    ]
    python = [code for lang, code in blocks if lang in ("python", "py", "python3")]
    chosen = python or [code for _, code in blocks]
    return chosen[-1].lstrip("\n") if chosen else answer


def normalised(answer: str) -> str | None:
    """The code's syntax tree without docstrings, its variables renamed in order of first
    appearance (function names kept); None when it does not parse."""
    try:
        tree = ast.parse(code_of(answer))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    _rename_variables(tree)
    return ast.dump(tree, annotate_fields=False)


def _rename_variables(tree: ast.AST) -> None:
    """Arguments and assigned names become v0, v1, ...: `total` and `acc` vote together.
    Names only read (builtins, globals, imports' modules) keep theirs."""
    nodes = list(ast.walk(tree))
    stored = [n.arg for n in nodes if isinstance(n, ast.arg)]
    stored += [n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    names = {name: f"v{i}" for i, name in enumerate(dict.fromkeys(stored))}
    for node in nodes:
        if isinstance(node, ast.arg) and node.arg in names:
            node.arg = names[node.arg]
        elif isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]


def _is_docstring(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def score(answer: str, tests: str) -> float:
    return 1.0 if check(code_of(answer), tests).passed else 0.0


def check(code: str, tests: str, *, timeout: float = TIMEOUT_SECONDS) -> Verdict:
    """Run `code` then `tests` in the sandbox. Raises ConfigError when there is none."""
    if len(code) > MAX_CODE_CHARS:
        return Verdict(False, f"the code is over {MAX_CODE_CHARS:,} characters")
    sandbox = _sandbox()
    with tempfile.TemporaryDirectory(prefix="massgen-code-") as folder:
        work = Path(folder)
        (work / "tmp").mkdir()
        (work / "solution.py").write_text(code, encoding="utf-8")
        (work / "tests.py").write_text(tests, encoding="utf-8")
        (work / "harness.py").write_text(HARNESS, encoding="utf-8")
        marker = secrets.token_hex(16)
        cpu = str(max(1, int(timeout)))
        argv = [sys.executable, "-I", "harness.py", marker, str(MEMORY_BYTES), cpu]
        finished = _run(sandbox, argv, work, timeout)
    lines = finished.output.splitlines()
    passed = finished.exit_code == 0 and not finished.timed_out and marker in lines[-1:]
    return Verdict(passed, finished.output.replace(marker, "").strip(), finished.timed_out)


def _sandbox() -> Sandbox:
    from massgen.permissions.sandbox import NoSandbox, select_sandbox

    sandbox = select_sandbox("auto", network=False)
    if isinstance(sandbox, NoSandbox):
        raise ConfigError(f"the code scorer runs answers only in a sandbox: {sandbox.reason}")
    return sandbox


def _run(sandbox: Sandbox, argv: list[str], work: Path, timeout: float) -> Finished:
    from massgen.permissions.sandbox import Confinement
    from massgen.workspace.runner import Limits, command_environment, run_command

    wrapped = sandbox.wrap(argv, Confinement(work, work / "tmp"))
    env = {**command_environment(os.environ), **wrapped.env}
    limits = Limits(timeout, MAX_OUTPUT_BYTES)
    # The scorer is called from the batch driver's event loop: the run gets a loop of its
    # own in a worker thread.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run_command(wrapped.argv, work, limits, env)).result()
