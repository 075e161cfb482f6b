"""What the permission engine adds to a tool call: `python -m bench.permissions`.

Decides N calls of each kind against an engine with a few rules and an fsynced ledger in
a temp directory, and prints the median and 95th percentile per decision.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from massgen.permissions.engine import Book, Call, Engine
from massgen.permissions.ledger import Ledger
from massgen.permissions.risk import Zones
from massgen.tools.effects import Effect, Read, Run, Write

RULES = Book.of(allow=["Command(pytest *)", "Read(./docs/**)"], deny=["Command(git push *)"])
CHAIN = "cd src && cat a.py | grep def > ../out.txt; echo $(ls) && pytest -q"


async def _time(engine: Engine, effects: tuple[Effect, ...], ws: Path, n: int) -> list[float]:
    seconds = []
    for _ in range(n):
        started = time.perf_counter()
        await engine.decide(Call("a", "t", effects, Zones(workspace=ws)))
        seconds.append(time.perf_counter() - started)
    return seconds


def measure(n: int = 300) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory(prefix="massgen-bench-perm-") as scratch:
        ws = Path(scratch).resolve() / "ws"
        (ws / "src").mkdir(parents=True)
        (ws / "src" / "a.py").write_text("def f(): pass\n")
        cases = {
            "read_file (ledger fsynced)": (Read(ws / "src" / "a.py"),),
            "write_file": (Write(ws / "out.txt"),),
            "command chain of 5": (Run(("/bin/sh", "-c", CHAIN), ws),),
        }
        out = {}
        for name, effects in cases.items():
            engine = Engine(default_book=RULES, ledger=Ledger(Path(scratch) / f"{len(out)}.jsonl"))
            seconds = sorted(asyncio.run(_time(engine, effects, ws, n)))
            out[name] = (statistics.median(seconds), seconds[int(len(seconds) * 0.95)])
        return out


def main() -> int:
    for name, (median, p95) in measure().items():
        print(f"{name:32} median {median * 1e3:7.3f} ms   p95 {p95 * 1e3:7.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
