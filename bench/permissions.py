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
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import report
from bench.proc import ROOT
from massgen.core.effects import Effect, Read, Run, Write
from massgen.permissions.engine import Book, Call, Engine
from massgen.permissions.ledger import Ledger
from massgen.permissions.risk import Zones

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


def render(results: dict[str, tuple[float, float, float]], n: int, load: float) -> str:
    rows = [
        [name, _ms(median), _ms(p95), _ms(bare)] for name, (median, p95, bare) in results.items()
    ]
    return "\n\n".join(
        [
            "## 15. Permission decisions",
            f"Written by `python -m bench.permissions` on {time.strftime('%Y-%m-%d')}: {n} "
            "decisions of each kind by an engine with three rules (1-minute load average "
            f"{load:.2f} at the end). The rules, paths and shell parsing are the decision; "
            "the ledger's fsync of each record is most of what a decision costs.",
            report.table(["call", "median", "p95", "median without the ledger"], rows),
        ]
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.permissions")
    parser.add_argument("--quick", action="store_true", help="30 each; print, don't write")
    args = parser.parse_args(argv)
    n = 30 if args.quick else 300
    text = render(measure(n), n, os.getloadavg()[0])
    if args.quick:
        print(text)
    else:
        from bench.local import write

        write(ROOT / "docs" / "benchmarks.md", text, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
