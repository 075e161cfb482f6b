"""Each kind of `verifier:` gives passed, failed or unchecked, bounded, and never a pass
for a check that could not be made (timeout, crash, missing command or function)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from massgen.config.verifier import VerifierConfig
from massgen.core.checks import Verdict
from massgen.permissions.sandbox import NoSandbox
from massgen.verifiers import examples as examples_module
from massgen.verifiers.examples import examples_of, python_examples
from massgen.verifiers.sandboxed import sandbox
from massgen.verifiers.team import for_config
from massgen.workspace.team import Workspaces

needs_sandbox = pytest.mark.skipif(
    isinstance(sandbox(), NoSandbox), reason="this machine has no OS sandbox"
)


def verifier(source: str | None = None, **block):
    return for_config(VerifierConfig(**block), source, None)


# ---------------------------------------------------------------- command


@needs_sandbox
async def test_a_command_reads_the_answer_on_stdin_and_its_exit_is_the_verdict():
    check = verifier(command="grep -q 72")
    assert (await check.check("It is 72.", "48 + 24?")).verdict is Verdict.PASSED
    failed = await check.check("It is 70.", "48 + 24?")
    assert (failed.verdict, failed.note) == (Verdict.FAILED, "exit 1")


@needs_sandbox
async def test_a_command_runs_in_a_read_only_copy_of_the_answers_files(tmp_path: Path):
    (tmp_path / "main.py").write_text("print('hi')\n")
    check = verifier(command="cat main.py && touch new.txt")
    result = await check.check("answer", "question", workspace=tmp_path)
    assert result.verdict is Verdict.FAILED
    assert "print('hi')" in result.excerpt and "Read-only" in result.excerpt
    assert not (tmp_path / "new.txt").exists()


@needs_sandbox
async def test_a_command_past_its_timeout_or_missing_is_unchecked_and_says_why():
    slow = await verifier(command="sleep 30", timeout_seconds=0.5).check("a", "q")
    assert (slow.verdict, slow.note) == (Verdict.UNCHECKED, "timed out after 0.5s")
    missing = await verifier(command="no-such-checker --strict").check("a", "q")
    assert (missing.verdict, missing.note) == (Verdict.UNCHECKED, "command not found (exit 127)")


@needs_sandbox
async def test_a_commands_output_is_bounded():
    check = await verifier(command="seq 1 100000; exit 1", max_output_chars=300).check("a", "q")
    assert check.verdict is Verdict.FAILED
    assert len(check.excerpt) <= 300 and "characters left out" in check.excerpt
    assert check.excerpt.startswith("1\n2\n") and check.excerpt.endswith("100000")


# ---------------------------------------------------------------- function


def _write_checks(directory: Path) -> None:
    (directory / "team.yaml").write_text("# the config the checks lie beside\n")
    (directory / "mychecks.py").write_text(
        "import asyncio, time\n"
        "def has_72(answer, question, workspace):\n"
        "    return ('72' in answer, 'looked for 72 in ' + question)\n"
        "async def slow(answer, question, workspace):\n"
        "    await asyncio.sleep(30)\n"
        "def stuck(answer, question, workspace):\n"
        "    time.sleep(30)\n"
        "def crashes(answer, question, workspace):\n"
        "    raise KeyError('boom')\n"
        "def says_maybe(answer, question, workspace):\n"
        "    return 'maybe'\n"
    )


async def test_a_function_beside_the_config_gives_its_verdict_and_message(tmp_path: Path):
    _write_checks(tmp_path)
    source = str(tmp_path / "team.yaml")
    check = verifier(source, function="mychecks:has_72")
    passed = await check.check("72", "48 + 24?")
    assert (passed.verdict, passed.excerpt) == (Verdict.PASSED, "looked for 72 in 48 + 24?")
    assert (await check.check("70", "48 + 24?")).verdict is Verdict.FAILED


async def test_a_function_that_hangs_crashes_or_answers_oddly_is_unchecked(tmp_path: Path):
    _write_checks(tmp_path)
    source = str(tmp_path / "team.yaml")

    async def run(name: str, **bounds):
        return await verifier(source, function=f"mychecks:{name}", **bounds).check("a", "q")

    started = time.monotonic()
    for name in ("slow", "stuck"):
        check = await run(name, timeout_seconds=0.3)
        assert (check.verdict, check.note) == (Verdict.UNCHECKED, "timed out after 0.3s")
    assert time.monotonic() - started < 5  # a sync function stuck in its thread is left
    crashed = await run("crashes")
    assert crashed.verdict is Verdict.UNCHECKED
    assert crashed.note == "crashed: KeyError: 'boom'"
    odd = await run("says_maybe")
    assert (odd.verdict, odd.note) == (
        Verdict.UNCHECKED,
        "returned a str, not a bool or (bool, str)",
    )


async def test_a_missing_module_or_function_makes_every_check_unchecked(tmp_path: Path):
    _write_checks(tmp_path)
    source = str(tmp_path / "team.yaml")
    gone = await verifier(source, function="nochecks:verify").check("a", "q")
    assert gone.verdict is Verdict.UNCHECKED and "no module `nochecks`" in gone.note
    absent = await verifier(source, function="mychecks:nothing").check("a", "q")
    assert (absent.verdict, absent.note) == (
        Verdict.UNCHECKED,
        "`mychecks` has no function `nothing`",
    )


# ---------------------------------------------------------------- python_examples

QUESTION = '''Write the Python function `digit_sum`:

```python
def digit_sum(n: int) -> int:
    """Return the sum of the decimal digits of the non-negative integer `n`.

    >>> digit_sum(123)
    6
    >>> digit_sum(0)
    0
    """
```

Reply with the complete function in a ```python block.'''


def test_the_examples_are_read_from_the_questions_docstring():
    assert examples_of(QUESTION) == [("digit_sum(123)\n", "6\n"), ("digit_sum(0)\n", "0\n")]


@needs_sandbox
async def test_python_examples_passes_a_correct_function_and_fails_a_wrong_one():
    right = "Sum the digits:\n```python\ndef digit_sum(n):\n    return sum(map(int, str(n)))\n```"
    passed, report = await python_examples(right, QUESTION, None)
    assert passed and report.strip() == "2 of 2 examples passed"
    wrong = "```python\ndef digit_sum(n):\n    return n\n```"
    passed, report = await python_examples(wrong, QUESTION, None)
    assert not passed
    assert "Expected:\n    6\nGot:\n    123" in report and "1 of 2 examples passed" in report


@needs_sandbox
async def test_python_examples_stops_an_infinite_loop(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(examples_module, "TIMEOUT_SECONDS", 1.0)
    looping = "```python\ndef digit_sum(n):\n    while True:\n        pass\n```"
    started = time.monotonic()
    passed, report = await python_examples(looping, QUESTION, None)
    assert not passed and "did not finish within 1s" in report
    assert time.monotonic() - started < 5


async def test_python_examples_without_examples_is_unchecked():
    check = await verifier(function="massgen.verifiers:python_examples").check(
        "```python\nprint(1)\n```", "Write any function."
    )
    assert check.verdict is Verdict.UNCHECKED
    assert check.note == (
        "crashed: ValueError: the question has no `>>>` examples to check the answer against"
    )


async def test_no_check_outlives_its_timeout_even_if_its_kind_ignores_it():
    class Sleeper:
        async def check(self, answer, question, workspace):
            await asyncio.sleep(60)

    from massgen.verifiers.team import GRACE_SECONDS, TeamVerifier

    config = VerifierConfig(command="true", timeout_seconds=0.1)
    started = time.monotonic()
    check = await TeamVerifier(Sleeper(), config).check("a", "q")
    assert check.verdict is Verdict.UNCHECKED
    assert time.monotonic() - started < GRACE_SECONDS + 1


@needs_sandbox
async def test_a_check_reads_the_snapshot_of_the_answer_it_checks(tmp_path: Path):
    workspaces = Workspaces(tmp_path / ".massgen", "run", {"a": "ws"})
    (workspaces.path("a") / "main.py").write_text("print('as published')\n")
    workspaces.published("a", "agent1.1")
    (workspaces.path("a") / "main.py").write_text("print('changed since')\n")
    check = for_config(VerifierConfig(command="cat main.py; pwd"), None, workspaces)
    result = await check.check("answer", "question", label="agent1.1")
    assert result.verdict is Verdict.PASSED
    printed, where = result.excerpt.splitlines()
    assert printed == "print('as published')"
    assert not Path(where).exists()  # the copy is gone after the check


@needs_sandbox
async def test_an_example_that_expects_none_checks_the_value_none():
    question = (
        "```python\ndef second(xs: list[int]) -> int | None:\n"
        '    """\n    >>> second([7, 7])\n    None\n    >>> second([1, 2])\n    1\n    """\n```'
    )
    right = "```python\ndef second(xs):\n    d = sorted(set(xs))\n    return d[-2] if len(d) > 1 else None\n```"
    assert (await python_examples(right, question, None))[0]
    wrong = "```python\ndef second(xs):\n    return 1\n```"
    assert not (await python_examples(wrong, question, None))[0]
