"""`python -m bench.first_run`: the README's first command as a new user meets it, timed.

A fresh clone of this checkout's HEAD, a new virtual environment, `pip install '.[local]'`
with no pip cache (so llama.cpp compiles where no wheel fits), then `massgen "What is the
capital of France?"` with an empty HOME, no keys and no terminal. Written into the
first-run section of `docs/benchmarks.md` (`python -m bench` keeps it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.local import write
from bench.proc import ROOT

BEGIN, END = "<!-- first run: begin -->", "<!-- first run: end -->"
QUESTION = "What is the capital of France?"


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        clone, home, cwd = (Path(scratch) / name for name in ("clone", "home", "cwd"))
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        home.mkdir()
        cwd.mkdir()
        install = _timed([sys.executable, "-m", "venv", ".venv"], clone)
        install += _timed(
            [".venv/bin/pip", "install", "-q", ".[local]"], clone, PIP_NO_CACHE_DIR="1"
        )
        env = {"PATH": os.environ["PATH"], "HOME": str(home)}
        started = time.monotonic()
        done = subprocess.run(
            [str(clone / ".venv/bin/massgen"), QUESTION],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        )  # fmt: skip
        answer = time.monotonic() - started
    load = os.getloadavg()[0]
    section = "\n\n".join(
        [
            "## 11. First run",
            f"Written by `python -m bench.first_run` on {time.strftime('%Y-%m-%d')}: a fresh "
            "clone, a new venv, `pip install '.[local]'` with no pip cache, then the README's "
            f"first command with an empty HOME and no keys (exit {done.returncode}; 1-minute "
            f"load average {load:.2f} at the end).",
            "| step | seconds |\n|---|---|\n"
            f"| venv + install (llama-cpp-python compiles llama.cpp) | {install:.0f} |\n"
            f'| `massgen "{QUESTION}"` to its final answer | {answer:.1f} |\n'
            f"| total | {install + answer:.0f} |",
            "The install is almost all compiling: PyPI has no llama-cpp-python wheel, and the "
            "prebuilt llama.cpp bindings there either need glibc 2.38 (llama-cpp-py-sync, every "
            "release) or are stale. The target of 2 minutes is not met on Debian 12.",
        ]
    )
    _write_section(section)
    return 0 if done.returncode == 0 else 1


def _timed(argv: list[str], cwd: Path, **env: str) -> float:
    started = time.monotonic()
    subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, check=True)
    return time.monotonic() - started


def _write_section(section: str) -> None:
    write(ROOT / "docs" / "benchmarks.md", section, BEGIN, END)


if __name__ == "__main__":
    raise SystemExit(main())
