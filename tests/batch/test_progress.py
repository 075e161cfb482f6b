"""The progress bar shows done, failed, running, tokens, cost and the time left."""

from __future__ import annotations

import io

from rich.console import Console

from massgen.batch.progress import BatchProgress
from massgen.batch.runner import Tally


def test_the_bar_counts_jobs_tokens_and_cost():
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160, color_system=None)
    tally = Tally(10)
    with BatchProgress(live=True, console=console) as progress:
        for status in ("ok", "ok", "failed"):
            tally.running += 1
            tally.finished({"status": status, "tokens": 1500, "cost": 0.01})
        tally.running = 2
        progress.update(tally)
    shown = screen.getvalue()
    assert "3/10" in shown
    assert "done 2  failed 1  running 2  tokens 4,500  cost $0.0300" in shown
    assert "ETA" in shown


def test_without_a_terminal_one_line_at_the_end(capsys):
    tally = Tally(2)
    with BatchProgress(live=False) as progress:
        tally.running = 1
        tally.finished({"status": "ok", "tokens": 10, "cost": None})
        progress.update(tally)
    assert (
        capsys.readouterr().err == "batch: done 1  failed 0  running 0  tokens 10  cost $0.0000\n"
    )
