"""Program-of-thought's runner: a Python snippet runs in the command sandbox, bounded, and
says how it ended; what it cannot do (the network, the user's files, run forever) it
cannot do."""

from __future__ import annotations

from massgen.permissions.sandbox import NoSandbox
from massgen.workspace.python_run import PythonRun, run_python


async def test_the_real_output_of_the_code_comes_back():
    run = await run_python("print(48 / 2 + 48)")
    assert run == PythonRun("72.0\n", 0, False)
    assert run.ok and run.report() == "72.0"


async def test_an_endless_loop_is_stopped_at_the_timeout_and_says_so():
    run = await run_python("while True: pass", timeout_seconds=1)
    assert run.timed_out and not run.ok
    assert "stopped: it ran past" in run.report()


async def test_an_error_is_reported_with_its_exit_code():
    run = await run_python("print('so far')\n1 / 0")
    assert run.exit_code == 1 and "ZeroDivisionError" in run.output
    assert run.report().endswith("(exit code 1)") and "so far" in run.report()


async def test_it_sees_an_empty_folder_no_home_and_no_network(tmp_path, monkeypatch):
    canary = tmp_path / "home" / "secret.txt"
    canary.parent.mkdir()
    canary.write_text("canary-9f3")
    monkeypatch.setenv("HOME", str(canary.parent))
    monkeypatch.setenv("GH_PAT", "canary-token")
    code = (
        "import os, socket\n"
        "print(sorted(os.listdir('.')))\n"
        f"print(os.path.exists({str(canary)!r}))\n"
        "print(os.environ.get('GH_PAT'))\n"
        "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
        "except OSError as error:\n    print('no network', type(error).__name__)\n"
    )
    run = await run_python(code)
    lines = run.output.splitlines()
    assert lines[0] == "['snippet.py', 'tmp']"
    assert lines[1] == "False" and lines[2] == "None"
    assert lines[3].startswith("no network")


async def test_without_a_sandbox_nothing_runs():
    run = await run_python("print(1)", sandbox=NoSandbox("no sandbox here"))
    assert run.refused == "no sandbox here" and not run.ok
    assert run.report() == "(not run: no sandbox here)"
