"""Markdown helpers: statistics over runs, tables, the machine description."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from bench.proc import ROOT

Fmt = Callable[[float], str]


def seconds(value: float) -> str:
    return f"{value:.3f} s"


def megabytes(value: float) -> str:
    return f"{value:.1f} MB"


def count(value: float) -> str:
    return f"{value:,.0f}"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


def spread(values: Sequence[float], fmt: Fmt) -> list[str]:
    """Median, min and max, as three cells."""
    return [fmt(statistics.median(values)), fmt(min(values)), fmt(max(values))]


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def machine(runs: int, load: tuple[float, float]) -> str:
    rows = [
        ("CPU", f"{_cpu_model()}, {os.cpu_count()} logical cores"),
        ("Memory", _memory()),
        ("OS", platform.platform()),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("massgen", f"{_version()} (commit {_commit()})"),
        ("Load", f"1-minute load average {load[0]:.2f} before, {load[1]:.2f} after"),
        ("Runs", f"{runs} per measurement; median, min and max are over these runs"),
    ]
    return table(["", ""], [(key, value) for key, value in rows])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024**2:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _version() -> str:
    from massgen import __version__

    return __version__


def _commit() -> str:
    try:
        head = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (", with local changes" if dirty else "")


def _git(*args: str) -> str:
    """What `git ARGS` in this checkout prints, stripped."""
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def shown(argv: Sequence[str]) -> str:
    """A command as a reader would type it: paths into this checkout made relative."""
    parts = []
    for part in argv:
        if part == sys.executable:
            part = "python"
        elif part == str(Path(sys.executable).parent / "massgen"):
            part = "massgen"  # the console script of this interpreter's environment
        elif part.startswith(str(ROOT)):
            part = os.path.relpath(part, ROOT)
        parts.append(f'"{part}"' if " " in part else part)
    return "`" + " ".join(parts) + "`"


def runs_and_quick(
    argv: list[str] | None, prog: str, runs: int, quick_runs: int, unit: str, per: str
) -> tuple[int, bool]:
    """A measuring module's command line: `--runs N` (default `runs`), or `--quick`
    (`quick_runs`, printed rather than written). The runs, and whether it is quick."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--runs", type=int, default=runs, help=f"{unit} {per} (default {runs})")
    parser.add_argument(
        "--quick", action="store_true", help=f"{quick_runs} {unit} each; print, don't write"
    )
    args = parser.parse_args(argv)
    return (quick_runs if args.quick else args.runs), args.quick


def progress(prog: str) -> Callable[[str], None]:
    """A measuring module's progress lines, `prog: message` on stderr, so that a section
    printed on stdout stays clean."""

    def say(message: str) -> None:
        print(f"{prog}: {message}", file=sys.stderr, flush=True)

    return say


def publish(text: str, begin: str, end: str, *, quick: bool) -> None:
    """A bench module's section: printed for `--quick`, else written between its markers in
    docs/benchmarks.md."""
    if quick:
        print(text)
        return
    from bench.local import write  # here, not at the top: bench.local loads the model stack

    write(ROOT / "docs" / "benchmarks.md", text, begin, end)
