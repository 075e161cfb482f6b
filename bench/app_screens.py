"""The README's screenshots of the terminal app, from a real run on the loopback fake.

    PYTHONPATH=$PWD python -m bench.app_screens      # writes docs/app-*.svg

Three agents with workspaces write a file each, answer, vote and present; the app is
captured at 120x36 on the stream tab, the answers board (an answer and its workspace diff
open) and the final answer. Textual draws the SVGs itself (`App.save_screenshot`).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Collapsible, TabbedContent

from bench.proc import ROOT
from massgen.api import TeamRun
from massgen.runs.loading import load
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.testing.teams import workspace_agents
from massgen.ui.tui.view import TuiView, run_turn

AGENTS = ("careful", "balanced", "creative")
QUESTION = "Write a Python function that returns the nth Fibonacci number, with a test."
SIZE = (120, 36)


def builder(request: dict) -> Reply:
    """Write a file before the first answer; then answer, vote and present as usual."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    wrote = any(m["role"] == "tool" for m in request["messages"])
    if "new_answer" in offered and not wrote:
        body = "def fib(n: int) -> int:\n    a, b = 0, 1\n    for _ in range(n):\n"
        body += "        a, b = b, a + b\n    return a\n\n\ndef test_fib():\n"
        body += "    assert [fib(i) for i in range(6)] == [0, 1, 1, 2, 3, 5]\n"
        return Reply(tool_calls=[("write_file", {"path": "fib.py", "content": body})])
    return cooperative_agent(request)


async def capture(out: Path) -> list[Path]:
    view = TuiView(models={name: f"model-{name}" for name in AGENTS})
    app = view.app
    written = []
    with FakeProvider(builder) as fake:
        agents = workspace_agents(fake.base_url, AGENTS, model="{id}")
        config = {"agents": agents, "orchestrator": {"seed": 5, "max_new_answers_per_agent": 1}}
        run = TeamRun(load(config), QUESTION, sinks=[view], approver=view.approver, logs=False)
        async with app.run_test(size=SIZE) as pilot:
            await run_turn(app, run.execute())
            while app.query_one(TabbedContent).active != "final":
                await asyncio.sleep(0.05)
            for keys, name in ((("1", "s"), "stream"), (("a",), "answers"), (("f",), "final")):
                await pilot.press(*keys)
                if name == "answers":
                    await _open_first_answer(pilot)
                await pilot.pause(0.3)
                path = out / f"app-{name}.svg"
                app.save_screenshot(filename=path.name, path=str(path.parent))
                written.append(path)
    return written


async def _open_first_answer(pilot: Pilot[Any]) -> None:
    board = pilot.app.query_one("#board")
    answer = next(f for f in board.query(Collapsible) if " · " in f.title)
    answer.collapsed = False
    answer.query_one(Collapsible).collapsed = False  # its workspace diff


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="massgen-screens-") as scratch:
        os.chdir(scratch)
        for path in asyncio.run(capture(ROOT / "docs")):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
