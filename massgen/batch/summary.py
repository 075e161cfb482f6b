"""The summary of a batch: per method, on the questions it shares with the team, accuracy
with its 95% Wilson interval, tokens, cost and seconds per question, and the paired
difference against the team. Written to `summary.json`, printed as a table, and drawn as
a bar chart (`summary.png`, with `massgen[plot]`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from massgen.batch import stages, store
from massgen.batch.scoring import wilson
from massgen.batch.verdicts import verdicts
from massgen.batch.work import SC, SINGLE, TEAM

Row = dict[str, Any]
CHART = "summary.png"


def methods_in(rows: Mapping[tuple[str, str], Row]) -> list[str]:
    """The team first, then each member alone, then self-consistency."""
    found = {method for _, method in rows}
    singles = sorted(m for m in found if m.startswith(SINGLE))
    return [m for m in (TEAM, *singles, SC) if m in found]


def summarise(
    rows: Mapping[tuple[str, str], Row],
    ids: Sequence[str],
    stage_records: Sequence[stages.Record] | None = None,
) -> dict[str, Any]:
    """`ids`: the batch's questions, in order. Only finished rows count; a baseline is
    compared with the team on the questions both finished. `stage_records`: where the
    team's accuracy goes (`stages.py`), when the logs were read."""
    team = _finished(rows, ids, TEAM)
    methods = []
    for method in methods_in(rows):
        mine = _finished(rows, ids, method)
        shared = [tid for tid in ids if tid in mine and (tid in team or method == TEAM)]
        entry = {"method": method, **_measure([mine[tid] for tid in shared])}
        if method != TEAM:
            entry["paired"] = _paired(team, mine, shared)
        if method == SC and shared:
            entry["k"] = mine[shared[0]].get("k")
            entry["member"] = mine[shared[0]].get("winner")
        methods.append(entry)
    failed = sum(1 for row in rows.values() if row.get("status") not in store.FINISHED)
    result = {
        "questions": len(ids),
        "failed_rows": failed,
        "methods": methods,
        "verdicts": verdicts(methods),
    }
    if stage_records is not None:
        result["stages"] = stages.summarise(stage_records, rows)
    return result


def _finished(rows: Mapping[tuple[str, str], Row], ids: Sequence[str], method: str) -> dict:
    found = {}
    for tid in ids:
        row = rows.get((tid, method))
        if row and row.get("status") in store.FINISHED:
            found[tid] = row
    return found


def _measure(rows: Sequence[Row]) -> dict[str, Any]:
    n = len(rows)
    scores = [float(r["score"]) for r in rows if r.get("score") is not None]
    costs = [float(r["cost"]) for r in rows if r.get("cost") is not None]
    accuracy = sum(scores) / len(scores) if scores else None
    low, high = wilson(sum(scores), len(scores)) if scores else (None, None)
    return {
        "n": n,
        "scored": len(scores),
        "accuracy": accuracy,
        "interval": [low, high],
        "tokens_per_question": sum(int(r.get("tokens") or 0) for r in rows) / n if n else 0,
        "cost_per_question": sum(costs) / n if costs and n else None,
        "seconds_per_question": sum(float(r.get("seconds") or 0) for r in rows) / n if n else 0,
    }


def _paired(team: Mapping[str, Row], mine: Mapping[str, Row], shared: Sequence[str]) -> dict:
    """Questions where exactly one of the two is right (score 1 vs 0), and the team's
    accuracy on the questions both scored (a partial baseline has fewer than the team)."""
    both = [tid for tid in shared if team[tid].get("score") is not None]
    right = lambda row: (row.get("score") or 0) >= 1  # noqa: E731
    return {
        "team_only": sum(right(team[t]) and not right(mine[t]) for t in both),
        "baseline_only": sum(right(mine[t]) and not right(team[t]) for t in both),
        "team_accuracy": sum(right(team[t]) for t in both) / len(both) if both else None,
    }


def write(out: Path, summary: Mapping[str, Any]) -> Path:
    from massgen.record.atomic import write_json

    path = out / store.SUMMARY
    write_json(path, dict(summary))
    return path


# --- showing it --------------------------------------------------------------------------------


def table(summary: Mapping[str, Any]) -> Any:
    """A rich Table of the summary."""
    from rich.table import Table

    grid = Table(title=f"massgen batch: {summary['questions']} questions", title_justify="left")
    for name in ("method", "n", "accuracy", "95% interval", "tokens/q", "cost/q", "s/q"):
        grid.add_column(name, justify="left" if name == "method" else "right")
    grid.add_column("paired: team / it only", justify="right")
    for entry in summary["methods"]:
        grid.add_row(*_cells(entry))
    return grid


def stage_table(summary: Mapping[str, Any]) -> Any:
    """A rich Table of where the team's accuracy goes (`stages.py`), or None."""
    from rich.table import Table

    found = summary.get("stages")
    if not found or not found["n"]:
        return None
    grid = Table(
        title=f"where the team's accuracy goes: {found['n']} questions", title_justify="left"
    )
    for name in ("stage", "n", "accuracy", "95% interval"):
        grid.add_column(name, justify="left" if name == "stage" else "right")
    for member in found["members"]:
        grid.add_row(
            *_stage_cells(f"first answer in team: {member['agent']}", member["first_answer"])
        )
        if member["single"]["n"]:
            grid.add_row(*_stage_cells(f"  alone (single:{member['agent']})", member["single"]))
    for key, name in (
        ("oracle", "oracle: some candidate right"),
        ("majority_first", "majority of first answers"),
        ("selected", "selected (the winning answer)"),
        ("final", "final (after presentation)"),
    ):
        grid.add_row(*_stage_cells(name, found[key]))
    passed = found.get("checked_passed")
    if passed and passed["n"]:  # a batch with a verifier; n counts candidates here
        grid.add_row(*_stage_cells("checked: passed among candidates (right)", passed))
    return grid


def stage_lines(summary: Mapping[str, Any]) -> list[str]:
    """The oracle gap, agreement and the verdicts, as lines under the tables."""
    lines = []
    found = summary.get("stages")
    if found and found["n"]:
        gap = found["oracle_gap"]
        ids = ", ".join(gap["ids"]) or "none"
        lines.append(f"oracle gap: {gap['count']} of {found['n']} questions ({ids})")
        agreed = found["agreement"]
        if agreed["ended_runs"]:
            lines.append(
                f"agreement ended {agreed['ended_runs']} runs before any vote: "
                f"{_tokens(agreed['tokens_per_question_agreed'])} tokens per question there, "
                f"{_tokens(agreed['tokens_per_question_voted'])} where the team voted"
            )
        if agreed.get("ranked_runs"):
            lines.append(
                f"ranked without a vote (when_split: rank): {agreed['ranked_runs']} runs, "
                f"{_tokens(agreed['tokens_per_question_ranked'])} tokens per question there"
            )
    lines += [f"verdict: {line}" for line in summary.get("verdicts", ())]
    return lines


def _stage_cells(name: str, rate: Mapping[str, Any]) -> list[str]:
    low, high = rate["interval"]
    interval = f"{_percent(low)}–{_percent(high)}" if low is not None else "–"
    return [name, str(rate["n"]), _percent(rate["accuracy"]), interval]


def _tokens(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _cells(entry: Mapping[str, Any]) -> list[str]:
    method = entry["method"]
    if method == SC and entry.get("k"):
        method = f"{SC} (k={entry['k']}, {entry.get('member')})"
    low, high = entry["interval"]
    paired = entry.get("paired")
    return [
        method,
        str(entry["n"]),
        _percent(entry["accuracy"]),
        f"{_percent(low)}–{_percent(high)}" if low is not None else "–",
        f"{entry['tokens_per_question']:,.0f}",
        _dollars(entry["cost_per_question"]),
        f"{entry['seconds_per_question']:.1f}",
        f"{paired['team_only']} / {paired['baseline_only']}" if paired else "–",
    ]


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _dollars(value: float | None) -> str:
    if value is None:
        return "–"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def chart(out: Path, summary: Mapping[str, Any]) -> Path | None:
    """Accuracy (bars, with the interval) against tokens per question, per method; None
    when matplotlib is not installed or nothing was scored."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    entries = [e for e in summary["methods"] if e["accuracy"] is not None]
    if not entries:
        return None
    entries.sort(key=lambda e: e["tokens_per_question"])
    labels = [f"{e['method']}\n{e['tokens_per_question']:,.0f} tok/q" for e in entries]
    values = [e["accuracy"] for e in entries]
    # Clamped: at 0/n or n/n the interval's end can sit a rounding error past the value.
    errors = [
        [max(0.0, v - e["interval"][0]) for v, e in zip(values, entries, strict=True)],
        [max(0.0, e["interval"][1] - v) for v, e in zip(values, entries, strict=True)],
    ]
    figure, axes = plt.subplots(figsize=(max(5, 1.8 * len(entries)), 4))
    colours = ["#dd8452" if e["method"] == TEAM else "#4c72b0" for e in entries]
    axes.bar(labels, values, yerr=errors, capsize=4, color=colours)
    axes.set_ylim(0, 1)
    axes.set_ylabel("accuracy (95% interval)")
    axes.set_title(f"{summary['questions']} questions: accuracy by method, cheapest first")
    figure.tight_layout()
    path = out / CHART
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def dumps(summary: Mapping[str, Any]) -> str:
    return json.dumps(summary, indent=2)
