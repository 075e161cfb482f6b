"""Faults of the run as a whole, not of a provider: the log cannot be written, the config
file goes away, two runs share a directory, a reader catches `status.json` mid-write.
Each runs a real `massgen` process against the fake provider."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from massgen.testing import FakeProvider

ANSWER = "ANSWER: Final answer from"


def write_team(folder: Path, base_url: str, name: str = "team.yaml") -> Path:
    agents = [
        {
            "id": f"a{i}",
            "backend": {"type": "chatcompletion", "model": f"m{i}", "base_url": base_url},
        }
        for i in range(3)
    ]
    path = folder / name
    path.write_text(yaml.safe_dump({"agents": agents}))
    return path


def start(folder: Path, config: Path, question: str = "q", **env: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "HOME": str(folder / "home"), **env}
    if "MASSGEN_LOG_BASE_DIR" not in env:
        environment.pop("MASSGEN_LOG_BASE_DIR", None)
    return subprocess.Popen(
        [sys.executable, "-m", "massgen", "--config", str(config), "--automation", question],
        cwd=folder,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out, err


def test_a_log_dir_that_cannot_be_made_still_gives_the_answer(tmp_path):
    (tmp_path / "a-file").write_text("")
    with FakeProvider() as fake:
        proc = start(
            tmp_path,
            write_team(tmp_path, fake.base_url),
            MASSGEN_LOG_BASE_DIR=str(tmp_path / "a-file" / "logs"),
        )
        out, err = finish(proc)
    assert ANSWER in out
    assert "run log not written" in err and "Traceback" not in err


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap for a small tmpfs")
def test_a_full_disk_stops_the_log_not_the_run(tmp_path):
    """The log base is a 8 KiB tmpfs (a mount namespace of bubblewrap's): it fills up
    during the run."""
    full = tmp_path / "full"
    full.mkdir()
    with FakeProvider() as fake:
        config = write_team(tmp_path, fake.base_url)
        command = [sys.executable, "-m", "massgen", "--config", str(config), "--automation", "q"]
        done = subprocess.run(
            ["bwrap", "--dev-bind", "/", "/", "--size", "8192", "--tmpfs", str(full), *command],
            cwd=tmp_path,
            env={**os.environ, "HOME": str(tmp_path), "MASSGEN_LOG_BASE_DIR": str(full)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    assert "No space left on device" in done.stderr and "Traceback" not in done.stderr


def test_the_config_file_deleted_mid_run_changes_nothing(tmp_path):
    with FakeProvider(latency=0.2) as fake:
        config = write_team(tmp_path, fake.base_url)
        proc = start(tmp_path, config)
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("LOG_DIR: ")  # the run has started
        config.unlink()
        out, _err = finish(proc)
    assert ANSWER in out


def test_two_runs_in_one_directory_keep_separate_logs(tmp_path):
    with FakeProvider(latency=0.05) as fake:
        config = write_team(tmp_path, fake.base_url)
        runs = [start(tmp_path, config, question) for question in ("first?", "second?")]
        for proc in runs:
            finish(proc)
    journals = sorted((tmp_path / ".massgen").rglob("events.jsonl"))
    assert len(journals) == 2
    questions = set()
    for journal in journals:
        events = [json.loads(line) for line in journal.read_text().splitlines()]
        started = [e for e in events if e["type"] == "run_started"]
        assert len(started) == 1 and events[-1]["type"] == "run_finished"
        questions.add(started[0]["question"])
    assert questions == {"first?", "second?"}


def test_status_json_is_never_read_half_written(tmp_path):
    reads: list[str] = []
    stop = threading.Event()

    def reader(folder: Path) -> None:
        while not stop.is_set():
            for status in folder.rglob("status.json"):
                with contextlib.suppress(FileNotFoundError):  # replaced since listed
                    reads.append(status.read_text())

    with FakeProvider(latency=0.02) as fake:
        config = write_team(tmp_path, fake.base_url)
        watcher = threading.Thread(target=reader, args=(tmp_path,), daemon=True)
        watcher.start()
        try:
            finish(start(tmp_path, config))
        finally:
            stop.set()
            watcher.join(timeout=5)
    assert len(reads) > 10, "the reader saw too few versions to test anything"
    for text in reads:
        json.loads(text)  # every version it read was whole
    assert json.loads(reads[-1])["is_complete"] is True
