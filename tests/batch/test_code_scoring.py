"""The `code` scorer and `@datasets/code-sample`: answers run against hidden tests in the
command sandbox, bounded in time, memory and reach; every shipped task's reference passes."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from code_solutions import SOLUTIONS

from massgen.batch import code_scoring
from massgen.batch.scoring import scorer
from massgen.batch.tasks import DATASETS, load_tasks
from massgen.cli import main
from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent

ADD = "def add(a, b):\n    return a + b\n"
TESTS = "assert add(1, 2) == 3\nassert add(-1, 1) == 0\n"
CODE = scorer("code")


def fenced(code: str, prose: str = "Here it is:") -> str:
    return f"{prose}\n\n```python\n{code}```\n\nDone."


def test_a_correct_function_scores_one_and_a_wrong_one_zero():
    assert CODE.score(fenced(ADD), TESTS) == 1.0
    assert CODE.score(fenced(ADD.replace("+", "-")), TESTS) == 0.0
    assert CODE.score(ADD, TESTS) == 1.0  # no block: the whole answer is the code
    assert CODE.score("I do not know.", TESTS) == 0.0
    assert (
        CODE.score(
            fenced(ADD),
            TESTS,
        )
        == 1.0
    )


def test_the_last_python_block_is_the_answer():
    draft = fenced(ADD.replace("+", "*"), "A first try:")
    assert CODE.score(draft + "\n" + fenced(ADD, "Fixed:"), TESTS) == 1.0
    assert CODE.score(fenced(ADD) + "\n```text\nnot code\n```\n", TESTS) == 1.0
    assert CODE.score("```python\n" + ADD, TESTS) == 1.0  # cut off before its fence closed
    on_the_fence = "```python import operator\ndef add(a, b):\n    return operator.add(a, b)\n```"
    assert CODE.score(on_the_fence, TESTS) == 1.0


def test_an_endless_loop_is_stopped_by_the_timeout():
    started = time.monotonic()
    verdict = code_scoring.check(
        "def add(a, b):\n    while True:\n        pass\n", TESTS, timeout=2
    )
    assert not verdict.passed and verdict.timed_out
    assert time.monotonic() - started < 2 + code_scoring.TIMEOUT_SECONDS / 2


def test_a_memory_hog_is_stopped():
    hog = "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 2**20))\n" + ADD
    verdict = code_scoring.check(hog, TESTS)
    assert not verdict.passed and not verdict.timed_out and "MemoryError" in verdict.output


def test_output_is_bounded():
    verdict = code_scoring.check("while True:\n    print('x' * 1000)\n", TESTS, timeout=2)
    assert not verdict.passed and len(verdict.output) < 2 * code_scoring.MAX_OUTPUT_BYTES


def test_code_cannot_read_files_outside_its_folder(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    reader = f"SECRET = open({str(secret)!r}).read()\n" + ADD
    verdict = code_scoring.check(reader, TESTS + "assert SECRET == 's3cret'\n")
    assert not verdict.passed and (
        "FileNotFoundError" in verdict.output or "Permission" in verdict.output
    )


def test_code_cannot_open_a_socket():
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    try:
        dialer = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        verdict = code_scoring.check(dialer + ADD, TESTS)
    finally:
        listener.close()
    assert not verdict.passed and not accepted


def test_self_consistency_votes_on_the_code_not_its_layout():
    plain = fenced(ADD)
    spaced = fenced('def add(a,b):\n    """Adds."""\n    # the sum\n    return (a + b)\n')
    assert CODE.extract(plain) == CODE.extract(spaced) is not None
    renamed = fenced("def add(x, y):\n    total = x + y\n    return total\n")
    assert CODE.extract(renamed) == CODE.extract(
        fenced("def add(p, q):\n    s = p + q\n    return s\n")
    )
    assert CODE.extract(fenced(ADD.replace("+", "-"))) != CODE.extract(plain)
    assert CODE.extract(fenced(ADD.replace("add", "plus"))) != CODE.extract(plain)
    assert CODE.extract(fenced("def add(a, b:\n")) is None


def shipped() -> list[dict]:
    lines = (DATASETS / "code-sample.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_the_dataset_has_30_tasks_with_public_examples_and_hidden_tests():
    rows = shipped()
    assert len(rows) >= 30 and len({row["id"] for row in rows}) == len(rows)
    for row in rows:
        assert f"def {row['entry_point']}(" in row["question"] and ">>> " in row["question"]
        assert "```python block" in row["question"]
        hidden = [line for line in row["answer"].splitlines() if line.startswith("assert ")]
        assert len(hidden) >= 4 + len(row["examples"])
        assert any(line not in row["question"] for line in hidden)  # more than the examples
        assert "assert" not in row["question"]
    assert set(SOLUTIONS) == {row["id"] for row in rows}


@pytest.mark.parametrize("task", load_tasks("@datasets/code-sample"), ids=lambda t: t.id)
def test_each_reference_passes_its_hidden_tests_and_a_stub_does_not(task):
    entry = next(row["entry_point"] for row in shipped() if row["id"] == task.id)
    verdict = code_scoring.check(SOLUTIONS[task.id], task.answer or "")
    assert verdict.passed, verdict.output
    stub = f"def {entry}(*args, **kwargs):\n    return None\n"
    assert not code_scoring.check(stub, task.answer or "").passed


def answers_with_the_reference(request: dict) -> Reply:
    """A team member that writes the reference solution of the task it is asked."""
    prompt = " ".join(str(m.get("content")) for m in request.get("messages") or [])
    task = next(row for row in shipped() if f"def {row['entry_point']}(" in prompt)
    answer = fenced(SOLUTIONS[task["id"]])
    reply = cooperative_agent(request)
    if any(name == "new_answer" for name, _ in reply.tool_calls):
        return Reply(tool_calls=[("new_answer", {"content": answer})])
    return reply if reply.tool_calls else Reply(text=answer)


@pytest.mark.usefixtures("in_tmp")
def test_batch_on_the_code_dataset_end_to_end(tmp_path):
    with FakeProvider(answers_with_the_reference) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url}
        team = {
            "agents": [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in (0, 1)]
        }
        config = tmp_path / "team.json"
        config.write_text(json.dumps(team))
        argv = ["batch", "@datasets/code-sample", "--scorer", "code", "--limit", "2"]
        code = main([*argv, "--config", str(config), "--out", "out", "--baselines", "single"])
    assert code == 0
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 2 * 3 and all(row["score"] == 1.0 for row in rows)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert all(entry["accuracy"] == 1.0 for entry in summary["methods"])
