"""The questions of a batch: JSONL or CSV files, or a shipped `@datasets/NAME`.

Each task has an `id`, a `question` and, for scoring, an `answer`; `--field question=q`
maps other column names onto those. A missing id becomes the line number, so a file
without ids still resumes as long as its order does not change.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.core.errors import ConfigError

DATASETS = Path(__file__).parent / "datasets"
PREFIX = "@datasets/"
FIELDS = ("id", "question", "answer")
MAX_TASKS = 1_000_000  # a bound on what one batch reads into memory


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    question: str
    answer: str | None = None


def parse_fields(spec: str | None) -> dict[str, str]:
    """`question=q,answer=a` → {"question": "q", "answer": "a"}. Raises ConfigError."""
    mapping: dict[str, str] = {}
    for part in filter(None, (spec or "").split(",")):
        ours, sep, theirs = part.partition("=")
        ours, theirs = ours.strip(), theirs.strip()
        if not sep or ours not in FIELDS or not theirs:
            raise ConfigError(
                f"bad --field entry {part!r}",
                fix=f"write OURS=THEIRS with OURS one of {', '.join(FIELDS)}, e.g. question=q",
            )
        mapping[ours] = theirs
    return mapping


def resolve(source: str) -> Path:
    """The file a tasks argument names. Raises ConfigError."""
    if source.startswith(PREFIX):
        name = source.removeprefix(PREFIX)
        path = DATASETS / f"{name}.jsonl"
        if not path.is_file():
            shipped = ", ".join(PREFIX + p.stem for p in sorted(DATASETS.glob("*.jsonl")))
            raise ConfigError(f"no dataset {source!r}", fix=f"shipped datasets: {shipped}")
        return path
    path = Path(source)
    if not path.is_file():
        raise ConfigError(f"tasks file not found: {source}", fix="give a .jsonl or .csv file")
    return path


def load_tasks(
    source: str,
    fields: Mapping[str, str] | None = None,
    *,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
) -> list[Task]:
    """Read, check and order the tasks. Shuffling happens before the limit, so
    `--shuffle --seed S --limit N` is a reproducible random sample. Raises ConfigError."""
    path = resolve(source)
    rows = _read_csv(path) if path.suffix.lower() == ".csv" else _read_jsonl(path)
    tasks = [_task(row, number, path, fields or {}) for number, row in rows]
    _check_unique(tasks, path)
    if shuffle:
        random.Random(seed).shuffle(tasks)
    return tasks[:limit] if limit is not None else tasks


def _read_jsonl(path: Path) -> list[tuple[int, Any]]:
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as error:
                raise ConfigError(
                    f"line {number} is not JSON ({error.msg})",
                    file=str(path),
                    fix="one JSON object per line",
                ) from None
            if len(rows) > MAX_TASKS:
                raise ConfigError(f"more than {MAX_TASKS:,} tasks", file=str(path))
    return rows


def _read_csv(path: Path) -> list[tuple[int, Any]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [(number, row) for number, row in enumerate(csv.DictReader(handle), 2)]
    if len(rows) > MAX_TASKS:
        raise ConfigError(f"more than {MAX_TASKS:,} tasks", file=str(path))
    return rows


def _task(row: Any, number: int, path: Path, fields: Mapping[str, str]) -> Task:
    if not isinstance(row, dict):
        raise ConfigError(f"line {number} is not an object", file=str(path))
    key = {name: fields.get(name, name) for name in FIELDS}
    question = row.get(key["question"])
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(
            f"line {number} has no {key['question']!r} text",
            file=str(path),
            path=key["question"],
            fix="map the question column with --field question=COLUMN",
        )
    given = row.get(key["id"])
    answer = row.get(key["answer"])
    return Task(
        id=str(given) if given not in (None, "") else f"line-{number}",
        question=question,
        answer=None if answer is None else str(answer),
    )


def _check_unique(tasks: Sequence[Task], path: Path) -> None:
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise ConfigError(
                f"id {task.id!r} appears twice",
                file=str(path),
                fix="ids must be unique: results and resume are keyed by them",
            )
        seen.add(task.id)
