"""What the permission engine adds to a tool call, written into the permissions section
of `docs/benchmarks.md` (between its markers; `python -m bench` keeps the section).

    python -m bench.permissions            # 300 decisions of each kind
    python -m bench.permissions --quick    # 30 each, printed instead of written

Decides N calls of each kind against an engine with a few rules and an fsynced ledger in
a temp directory: the median and 95th percentile per decision, and the same without the
ledger (what the decision itself costs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import report
from massgen.core.effects import Effect, Read, Run, Write
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.engine import Book, Call, Engine
from massgen.permissions.ledger import Ledger
from massgen.permissions.risk import Zones
from massgen.workspace.team import Workspaces

BEGIN, END = "<!-- permissions: begin -->", "<!-- permissions: end -->"
RULES = Book.of(allow=["Command(pytest *)", "Read(./docs/**)"], deny=["Command(git push *)"])
CHAIN = "cd src && cat a.py | grep def > ../out.txt; echo $(ls) && pytest -q"


async def _time(engine: Engine, effects: tuple[Effect, ...], ws: Path, n: int) -> list[float]:
    seconds = []
    for _ in range(n):
        started = time.perf_counter()
        await engine.decide(Call("a", "t", effects, Zones(workspace=ws)))
        seconds.append(time.perf_counter() - started)
    return seconds


def measure(n: int = 300) -> dict[str, tuple[float, float, float]]:
    """Per kind of call: median and p95 seconds with the fsynced ledger, median without."""
    with tempfile.TemporaryDirectory(prefix="massgen-bench-perm-") as scratch:
        ws = Path(scratch).resolve() / "ws"
        (ws / "src").mkdir(parents=True)
        (ws / "src" / "a.py").write_text("def f(): pass\n")
        cases = {
            "read_file": (Read(ws / "src" / "a.py"),),
            "write_file": (Write(ws / "out.txt"),),
            "command chain of 5": (Run(("/bin/sh", "-c", CHAIN), ws),),
        }
        out = {}
        for name, effects in cases.items():
            ledger = Ledger(Path(scratch) / f"{len(out)}.jsonl")
            synced = sorted(
                asyncio.run(_time(Engine(default_book=RULES, ledger=ledger), effects, ws, n))
            )
            bare = asyncio.run(
                _time(Engine(default_book=RULES, ledger=Ledger(None)), effects, ws, n)
            )
            p95 = synced[int(len(synced) * 0.95)]
            out[name] = (statistics.median(synced), p95, statistics.median(bare))
        return out


FILE_CALLS = {
    "read_file": ("read_file", {"path": "src/a.py"}),
    "write_file": ("write_file", {"path": "src/deep/out.txt", "content": "x" * 1000}),
    "edit_file": ("edit_file", {"path": "src/a.py", "old": "MARK", "new": "MARK"}),
    "list_dir": ("list_dir", {"path": "src"}),
    "grep, 50 files": ("grep", {"pattern": "never-there", "path": "tree"}),
}


def measure_file_tools(n: int = 300) -> dict[str, tuple[float, float]]:
    """The file tools themselves (no engine): median and p95 seconds per call."""
    with tempfile.TemporaryDirectory(prefix="massgen-bench-files-") as scratch:
        ws = Workspaces(Path(scratch) / ".massgen", "bench", {"a": "ws"})
        root = ws.path("a")
        (root / "src").mkdir()
        (root / "src" / "a.py").write_text("MARK\n" + "def f(): pass\n" * 50)
        for i in range(50):
            (root / "tree" / f"d{i % 5}").mkdir(parents=True, exist_ok=True)
            (root / "tree" / f"d{i % 5}" / f"f{i}.py").write_text("line\n" * 200)
        ctx = ToolContext("a", workspace=root)
        return {
            label: asyncio.run(_time_file_tool(ws, ctx, *c, n)) for label, c in FILE_CALLS.items()
        }


async def _time_file_tool(
    ws: Workspaces, ctx: ToolContext, name: str, args: dict[str, str], n: int
) -> tuple[float, float]:
    call = ToolCall("c", name, json.dumps(args))
    seconds = []
    for _ in range(n):
        started = time.perf_counter()
        result = await ws.files.call(call, ctx)
        seconds.append(time.perf_counter() - started)
        assert not result.is_error, result.content
    seconds.sort()
    return statistics.median(seconds), seconds[int(len(seconds) * 0.95)]


def render(
    results: dict[str, tuple[float, float, float]],
    n: int,
    load: float,
    files: dict[str, tuple[float, float]] | None = None,
) -> str:
    rows = [
        [name, _ms(median), _ms(p95), _ms(bare)] for name, (median, p95, bare) in results.items()
    ]
    file_rows = [[name, _ms(median), _ms(p95)] for name, (median, p95) in (files or {}).items()]
    return "\n\n".join(
        [
            "## 15. Permission decisions",
            f"Written by `python -m bench.permissions` on {time.strftime('%Y-%m-%d')}: {n} "
            "decisions of each kind by an engine with three rules (1-minute load average "
            f"{load:.2f} at the end). The rules, paths and shell parsing are the decision; "
            "the ledger's fsync of each record is most of what a decision costs.",
            report.table(["call", "median", "p95", "median without the ledger"], rows),
            "The file tools themselves, without the engine (each call a thread hop from one "
            "event loop; paths opened relative to the workspace's directory descriptor, "
            "no symlink followed):",
            report.table(["file tool call", "median", "p95"], file_rows),
        ]
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.permissions")
    parser.add_argument("--quick", action="store_true", help="30 each; print, don't write")
    args = parser.parse_args(argv)
    n = 30 if args.quick else 300
    text = render(measure(n), n, os.getloadavg()[0], measure_file_tools(n))
    report.publish(text, BEGIN, END, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
