"""Reading tasks (JSONL, CSV, --field, @datasets) and what a batch keeps on disk."""

from __future__ import annotations

import json

import pytest

from massgen.batch import store
from massgen.batch.tasks import load_tasks, parse_fields
from massgen.core.errors import ConfigError


def test_jsonl_tasks_with_and_without_ids(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": 7, "question": "a?", "answer": 1}\n\n{"question": "b?"}\n')
    tasks = load_tasks(str(path))
    assert [(t.id, t.question, t.answer) for t in tasks] == [
        ("7", "a?", "1"),
        ("line-3", "b?", None),
    ]


def test_csv_with_a_field_mapping(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("key,q,a\nx1,What is 2+2?,4\nx2,Capital of France?,Paris\n")
    tasks = load_tasks(str(path), parse_fields("id=key,question=q,answer=a"))
    assert [(t.id, t.answer) for t in tasks] == [("x1", "4"), ("x2", "Paris")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": 1}\n', "no 'question' text"),
        ("not json\n", "line 1 is not JSON"),
        ('{"id": 1, "question": "a"}\n{"id": 1, "question": "b"}\n', "appears twice"),
    ],
)
def test_bad_task_files_say_which_line(tmp_path, text, message):
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as error:
        load_tasks(str(path))
    assert str(path) in str(error.value)


def test_bad_field_mapping_and_missing_file():
    with pytest.raises(ConfigError, match="--field"):
        parse_fields("prompt=q")
    with pytest.raises(ConfigError, match="not found"):
        load_tasks("nowhere.jsonl")
    with pytest.raises(ConfigError, match="gsm8k-sample"):
        load_tasks("@datasets/nope")


def test_the_shipped_gsm8k_sample():
    tasks = load_tasks("@datasets/gsm8k-sample")
    assert len(tasks) == 50 and len({t.id for t in tasks}) == 50
    assert all(t.answer and "####" in t.answer for t in tasks)
    assert tasks[0].question.startswith("Natalia sold clips")


def test_shuffle_is_reproducible_and_comes_before_the_limit():
    first = load_tasks("@datasets/gsm8k-sample", shuffle=True, seed=3, limit=5)
    again = load_tasks("@datasets/gsm8k-sample", shuffle=True, seed=3, limit=5)
    other = load_tasks("@datasets/gsm8k-sample", shuffle=True, seed=4, limit=5)
    assert first == again and first != other and len(first) == 5


def test_a_line_cut_by_a_kill_is_dropped_and_the_latest_row_wins(tmp_path):
    (tmp_path / store.RESULTS).write_text(
        json.dumps({"id": "a", "method": "team", "status": "failed"})
        + "\n"
        + json.dumps({"id": "a", "method": "team", "status": "ok"})
        + '\n{"id": "b", "meth'
    )
    writer = store.ResultsFile(tmp_path)
    writer.append({"id": "c", "method": "team", "status": "ok"})
    writer.close()
    lines = (tmp_path / store.RESULTS).read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)
    rows = store.read_rows(tmp_path)
    assert rows[("a", "team")]["status"] == "ok"
    assert store.finished(rows) == {("a", "team"), ("c", "team")}


def test_a_changed_manifest_is_refused_unless_forced(tmp_path):
    def manifest(model: str) -> dict:
        settings = {"config": {"model": model}, "scorer": "numeric"}
        return {"fingerprint": store.fingerprint(settings), "settings": settings}

    store.check_manifest(tmp_path, manifest("m1"), force=False)
    store.check_manifest(tmp_path, manifest("m1"), force=False)  # the same batch again
    with pytest.raises(ConfigError, match=r"different batch \(changed: config\)"):
        store.check_manifest(tmp_path, manifest("m2"), force=False)
    store.check_manifest(tmp_path, manifest("m2"), force=True)
    saved = json.loads((tmp_path / store.MANIFEST).read_text())
    assert saved["settings"]["config"] == {"model": "m2"}
