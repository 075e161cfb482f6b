"""The CLI members benchmark: its watch over child processes (real ones), and the section's
arithmetic (its numbers live in docs/benchmarks.md)."""

import subprocess
import time

from bench import children
from bench.children import ChildWatch
from bench.cli_members import PAIRS, Sample, render


def test_a_child_is_seen_from_its_start_to_its_end_with_its_memory():
    with ChildWatch() as watch:
        before = children.now()
        subprocess.run(["sleep", "0.3"], check=True)
        after = children.now()
    (child,) = watch.children.values()
    assert child.name == "sleep" and child.peak_kb > 0
    assert child.ended is not None and watch.last_end == child.ended
    assert before - 0.02 <= child.started <= child.ended <= after + 0.05  # 10 ms ticks
    assert child.ended - child.started >= 0.25
    assert watch.peak_mb == child.peak_kb / 1024


def test_a_child_still_running_after_the_block_has_no_end(monkeypatch):
    monkeypatch.setattr(children, "SETTLE", 0.2)
    with ChildWatch() as watch:
        left = subprocess.Popen(["sleep", "30"])
        time.sleep(0.1)
    try:
        assert [c.ended for c in watch.children.values()] == [None]
        assert watch.last_end is None
    finally:
        left.kill()
        left.wait()


def sample(run: float, spawned: float | None, left: tuple[str, ...] = ()) -> Sample:
    first = (spawned or 0.0) + 0.5 * run
    ended = None if left else run - 0.05
    return Sample(run, spawned, first, first, ended, run, 100.0, ("codex",), 3, left)


def test_the_section_puts_each_cli_member_against_its_api_member():
    pair = next(p for p in PAIRS if p.cli == "codex")
    samples = {"openai": [sample(0.1, None)] * 5, "codex": [sample(1.1, 0.01)] * 5}
    samples["codex"][0] = sample(1.1, 0.01, left=("git",))
    text = render([pair], {"codex": "Codex 0.171.0"}, samples, 5, (1.0, 2.0), ["gemini_cli"])
    row = next(line for line in text.splitlines() if line.startswith("| `codex`"))
    assert row.startswith("| `codex` | 1.10 s | 1.10 s | +1.00 s | 0.01 s | 0.55 s | 0.00 s |")
    assert "| – |" in row  # a run whose processes did not all end has no teardown
    assert "100 MB (codex; 3 processes a turn)" in row
    assert "`codex` +1.00 s, of which 0.55 s (55%) from its process start" in text
    assert "left a process running 5 s after them: codex (git)" in text
    assert "Not installed, so not measured: gemini_cli." in text
