"""docs/quality.md: where the team's accuracy goes, before and after, from batch folders.

    PYTHONPATH=$PWD python -m bench.quality before=DIR after=DIR [--title T] [--section S]

Each DIR is the `--out` of a `massgen batch` run. Every table is computed on the questions
that all the given batches finished for the team, so the columns compare like with like;
the stage records are rebuilt from each batch's team logs (`massgen/batch/stages.py`),
scored against the batch's own tasks and scorer (its manifest). The section between the
markers `<!-- quality S: begin -->` and `<!-- quality S: end -->` is replaced.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.proc import ROOT
from bench.report import table
from massgen.batch import scoring, stages, store, summary
from massgen.batch.tasks import load_tasks
from massgen.batch.work import TEAM

DOC = ROOT / "docs" / "quality.md"


def load_batch(out: Path) -> tuple[dict, dict, scoring.Scorer]:
    manifest = store.read_manifest(out)
    settings = manifest.get("settings") or {}
    tasks = load_tasks(str(manifest["tasks"]), settings.get("fields") or {})
    references = {task.id: task.answer for task in tasks}
    return store.read_rows(out), references, scoring.scorer(str(settings.get("scorer")))


def finished_team(rows: Mapping[tuple[str, str], dict]) -> set[str]:
    return {
        tid
        for (tid, method), row in rows.items()
        if method == TEAM and row.get("status") in store.FINISHED
    }


def section(batches: Sequence[tuple[str, Path]]) -> str:
    loaded = {label: (out, *load_batch(out)) for label, out in batches}
    shared = set.intersection(*(finished_team(rows) for _, rows, _, _ in loaded.values()))
    parts = []
    for label, (out, rows, references, scorer) in loaded.items():
        ids = sorted(shared)
        records = stages.build(out, rows, ids, references, scorer)
        result = summary.summarise(rows, ids, records)
        parts.append(f"#### {label}\n\n{_methods(result)}\n\n{_stages(result)}")
    header = f"On the {len(shared)} questions that every batch below finished for the team.\n"
    return header + "\n\n".join(parts)


def _methods(result: Mapping[str, Any]) -> str:
    rows = []
    for entry in result["methods"]:
        low, high = entry["interval"]
        paired = entry.get("paired")
        rows.append(
            [
                entry["method"]
                + (f" (k={entry['k']}, {entry.get('member')})" if entry.get("k") else ""),
                str(entry["n"]),
                _pct(entry["accuracy"]),
                f"{_pct(low)}–{_pct(high)}",
                f"{entry['tokens_per_question']:,.0f}",
                f"{paired['team_only']} / {paired['baseline_only']}" if paired else "–",
            ]
        )
    grid = table(
        ["method", "n", "accuracy", "95% interval", "tokens/q", "paired: team / it only"], rows
    )
    verdicts = "\n".join(f"- {line}" for line in result.get("verdicts", ()))
    return grid + ("\n\n" + verdicts if verdicts else "")


def _stages(result: Mapping[str, Any]) -> str:
    found = result.get("stages")
    if not found or not found["n"]:
        return "(no team logs to read stages from)"
    rows = []
    for member in found["members"]:
        rows.append(_rate_row(f"first answer in team: {member['agent']}", member["first_answer"]))
        if member["single"]["n"]:
            rows.append(_rate_row(f"… alone (single:{member['agent']})", member["single"]))
    for key, name in (
        ("oracle", "oracle: some candidate right"),
        ("majority_first", "majority of first answers"),
        ("selected", "selected"),
        ("final", "final"),
    ):
        rows.append(_rate_row(name, found[key]))
    if found.get("checked_passed", {}).get("n"):  # a batch with a verifier; n: candidates
        rows.append(_rate_row("candidates that passed their check: right", found["checked_passed"]))
    gap = found["oracle_gap"]
    agreed = found["agreement"]
    notes = [
        f"- oracle gap: {gap['count']} of {found['n']} questions ({', '.join(gap['ids']) or 'none'})",
        f"- agreement ended {agreed['ended_runs']} of {found['n']} runs before any vote "
        f"(team tokens per question: {_num(agreed['tokens_per_question_agreed'])} there, "
        f"{_num(agreed['tokens_per_question_voted'])} where it voted)",
    ]
    if agreed.get("ranked_runs"):
        notes.append(
            f"- the rest ranked without a vote (`when_split: rank`): {agreed['ranked_runs']} "
            f"runs, {_num(agreed['tokens_per_question_ranked'])} team tokens per question"
        )
    return table(["stage", "n", "accuracy", "95% interval"], rows) + "\n\n" + "\n".join(notes)


def _rate_row(name: str, rate: Mapping[str, Any]) -> list[str]:
    low, high = rate["interval"]
    return [name, str(rate["n"]), _pct(rate["accuracy"]), f"{_pct(low)}–{_pct(high)}"]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def replace_section(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- quality {name}: begin -->", f"<!-- quality {name}: end -->"
    block = f"{begin}\n{body}\n{end}"
    if begin in text and end in text:
        return text.split(begin)[0] + block + text.split(end, 1)[1]
    return text.rstrip() + "\n\n" + block + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality")
    parser.add_argument("batches", nargs="+", metavar="LABEL=DIR")
    parser.add_argument("--section", default="gsm8k")
    args = parser.parse_args(argv)
    batches = [(label, Path(path)) for label, _, path in (b.partition("=") for b in args.batches)]
    body = section(batches)
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Answer quality\n"
    DOC.write_text(replace_section(text, args.section, body), encoding="utf-8")
    print(json.dumps({"section": args.section, "doc": str(DOC)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
