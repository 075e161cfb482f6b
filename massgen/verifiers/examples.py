"""The built-in verifier for code tasks: `function: massgen.verifiers:python_examples`.

It uses only what the question gives: the `>>>` examples in the docstring of the
signature the question shows (as in `@datasets/code-sample`), never a scorer's hidden
tests, so a batch scored with hidden tests stays honest. The answer's code is its last
```python block (else its last ``` block, else the whole answer).

The examples run as a doctest (whitespace normalised) against that code, in the command
sandbox (`sandboxed.py`), and inside it under limits the code cannot raise again:
`MEMORY_BYTES` of address space, `CPU_SECONDS` of CPU, no new processes, small files;
`TIMEOUT_SECONDS` of wall time in all. Every example right: passed. A wrong output, an
exception, code that does not run, a loop past the time bound: failed, with doctest's
report. A question without examples has nothing to check against: it raises, and the
check is `unchecked`.
"""

from __future__ import annotations

import ast
import doctest
import json
import re
import sys
from pathlib import Path

from massgen.verifiers.sandboxed import RLIMITS, run_confined

TIMEOUT_SECONDS = 10.0
CPU_SECONDS = 8
MEMORY_BYTES = 512 * 2**20
MAX_CODE_CHARS = 200_000

_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_PYTHON = ("python", "py", "python3")
_QUOTES = re.compile(r"^\s*(\"\"\"|''')\s*$")

# Runs inside the sandbox: limits first, then the answer's code, then the examples.
HARNESS = (
    """\
import doctest, json, resource, sys
memory, cpu = int(sys.argv[1]), int(sys.argv[2])
"""
    + RLIMITS
    + """\
globs = {"__name__": "__main__"}
try:
    exec(compile(open("solution.py").read(), "solution.py", "exec"), globs)
except BaseException as error:
    print(f"the answer's code does not run: {type(error).__name__}: {error}")
    sys.exit(3)
examples = [doctest.Example(source, want) for source, want in json.load(open("examples.json"))]
test = doctest.DocTest(examples, globs, "examples", "question", 0, None)
runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
failed, attempted = runner.run(test, out=sys.stdout.write)
print(f"{attempted - failed} of {attempted} examples passed")
sys.exit(1 if failed else 0)
"""
)


async def python_examples(answer: str, question: str, workspace: Path | None) -> tuple[bool, str]:
    """Raises ValueError (the check is then `unchecked`) when the question has no `>>>`
    examples, RuntimeError when there is no sandbox to run them in."""
    examples = examples_of(question)
    if not examples:
        raise ValueError("the question has no `>>>` examples to check the answer against")
    code = code_of(answer)
    if len(code) > MAX_CODE_CHARS:
        return False, f"the answer's code is over {MAX_CODE_CHARS:,} characters; not run"
    files = {
        "solution.py": code,
        "examples.json": json.dumps(examples),
        "harness.py": HARNESS,
    }
    argv = (sys.executable, "-I", "harness.py", str(MEMORY_BYTES), str(CPU_SECONDS))
    ended = await run_confined(
        argv, timeout_seconds=TIMEOUT_SECONDS, files=files, memory_mb=MEMORY_BYTES // 2**20 * 2
    )
    if isinstance(ended, str):
        raise RuntimeError(ended)
    if ended.timed_out:
        return False, f"the examples did not finish within {TIMEOUT_SECONDS:g}s\n{ended.output}"
    if ended.exit_code < 0:  # the CPU bound (SIGXCPU) or a crash of the code
        return False, f"the code was ended by signal {-ended.exit_code}\n{ended.output}"
    return ended.exit_code == 0, ended.output


def code_of(answer: str) -> str:
    """The last ```python block of the answer (else its last ``` block, else the answer)."""
    blocks = _BLOCK.findall(answer)
    python = [code for lang, code in blocks if lang.lower() in _PYTHON]
    chosen = python or [code for _, code in blocks]
    return chosen[-1] if chosen else answer


def examples_of(question: str) -> list[tuple[str, str]]:
    """(source, expected output) of each `>>>` example in the docstrings of the code the
    question shows; where that code does not parse, of the question's text itself."""
    found: list[tuple[str, str]] = []
    for _lang, block in _BLOCK.findall(question):
        found += [pair for doc in _docstrings(block) for pair in _parsed(doc)]
    if not found:  # no parseable code: the text itself, less lines of bare quotes
        text = "\n".join(line for line in question.splitlines() if not _QUOTES.match(line))
        found = _parsed(text.replace("```", "\n"))
    return found


def _docstrings(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, _WITH_DOCSTRINGS))]
    return [doc for node in nodes if (doc := ast.get_docstring(node, clean=True))]


_WITH_DOCSTRINGS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _parsed(text: str) -> list[tuple[str, str]]:
    try:
        examples = doctest.DocTestParser().get_examples(text)
    except ValueError:  # inconsistent indentation in a hand-written example
        return []
    return [(_shown(example.source, example.want), example.want) for example in examples]


def _shown(source: str, want: str) -> str:
    """A task that writes `None` under an expression means the value None, which a real
    doctest shows as nothing: print its repr so that the example checks what it says."""
    if want.strip() != "None":
        return source
    try:
        ast.parse(source, mode="eval")
    except SyntaxError:
        return source
    return f"print(repr({source.strip()}))\n"
