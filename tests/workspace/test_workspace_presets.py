"""The workspace presets on the loopback fake provider: `tools/workspace` (agents write a
program and test it with `execute_command`) and `tools/context_path` (agents read a
directory; the final presenter writes a report into it)."""

from __future__ import annotations

import json
import sys

import pytest
from workspace_agents import presenter_writes

from massgen import api
from massgen.testing import FakeProvider, Reply, cooperative_agent

pytestmark = pytest.mark.usefixtures("in_tmp")
PROGRAM = "def count(s):\n    return len(s.split())\n\nassert count('a b c') == 3\nprint('ok')\n"


def _results(request):
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def builder(request: dict) -> Reply:
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = _results(request)
    if "new_answer" in offered and not results:
        return Reply(tool_calls=[("write_file", {"path": "wc.py", "content": PROGRAM})])
    if "new_answer" in offered and len(results) == 1:
        return Reply(tool_calls=[("execute_command", {"command": f"{sys.executable} wc.py"})])
    return cooperative_agent(request)


async def test_workspace_preset_writes_and_tests_a_program(monkeypatch):
    with FakeProvider(builder) as fake:
        monkeypatch.setenv("MASSGEN_BASE_URL", fake.base_url)
        result = await api.arun("Write a word counter.", "@examples/tools/workspace")
        requests = fake.requests
    assert result.ok, result.reason
    ran = [r for req in requests for r in _results(req) if "ok" in r and "exit" in r.lower()]
    assert ran, "the command tool ran the program"
    assert (result.log_dir / "final" / "workspace" / "wc.py").read_text() == PROGRAM


def reviewer(project):
    read = ("read_file", {"path": str(project / "app.py")})
    return presenter_writes(
        read, project / "REPORT.md", "# Review\nfine\n", "Final: REPORT.md written."
    )


async def test_context_path_preset_reads_and_the_presenter_reports(monkeypatch, tmp_path):
    project = (tmp_path / "project").resolve()
    project.mkdir()
    (project / "app.py").write_text("print('app')\n")
    monkeypatch.setenv("MASSGEN_CONTEXT_DIR", str(project))
    with FakeProvider(reviewer(project)) as fake:
        monkeypatch.setenv("MASSGEN_BASE_URL", fake.base_url)
        result = await api.arun("Review it and write REPORT.md.", "@examples/tools/context_path")
        requests = fake.requests
    assert result.ok, result.reason
    assert any("print('app')" in r for req in requests for r in _results(req))
    assert (project / "REPORT.md").read_text() == "# Review\nfine\n"
    assert (project / "app.py").read_text() == "print('app')\n"
    assert result.context_changes.created == (str(project / "REPORT.md"),)
    logged = json.loads((result.log_dir / "context_changes.json").read_text())
    assert logged["created"] == [str(project / "REPORT.md")]
