"""What a batch keeps on disk: `results.jsonl` (one row per finished job, appended by one
writer) and `manifest.json` (the fingerprint a rerun must match).

A row is keyed by (`id`, `method`): `team`, `single:<agent>` or `self-consistency`. The last
row for a key wins, so a failed job retried later simply has a newer row. A driver killed
mid-write leaves at most one partial last line, which the writer cuts off when it reopens.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from massgen.core.errors import ConfigError
from massgen.record.atomic import write_json

RESULTS, MANIFEST, SUMMARY = "results.jsonl", "manifest.json", "summary.json"
FINISHED = frozenset({"ok", "degraded"})  # a row with another status is retried

Row = dict[str, Any]


def key(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row["id"]), str(row.get("method", "team"))


def read_rows(out: Path) -> dict[tuple[str, str], Row]:
    """The latest row per key; a line that is not JSON (a cut-off write) is skipped."""
    latest: dict[tuple[str, str], Row] = {}
    for row in _lines(out / RESULTS):
        latest[key(row)] = row
    return latest


def _lines(path: Path) -> Iterator[Row]:
    if not path.exists():
        return
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "id" in row:
                yield row


def finished(rows: Mapping[tuple[str, str], Row]) -> set[tuple[str, str]]:
    return {k for k, row in rows.items() if row.get("status") in FINISHED}


class ResultsFile:
    """The one writer of `results.jsonl`: a line per row, flushed and fsynced, so a row
    written is a row kept, whatever kills the process next."""

    def __init__(self, out: Path) -> None:
        self.path = out / RESULTS
        _cut_partial_line(self.path)
        self._file = self.path.open("a", encoding="utf-8")

    def append(self, row: Row) -> None:
        self._file.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def _cut_partial_line(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    with path.open("r+b") as handle:
        handle.truncate(data.rfind(b"\n") + 1)


# --- the manifest ------------------------------------------------------------------------------


def fingerprint(settings: Mapping[str, Any]) -> str:
    """sha256 of what decides the answers and scores (config, scorer, baselines, k)."""
    canonical = json.dumps(settings, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_manifest(out: Path, manifest: Mapping[str, Any], *, force: bool) -> None:
    """Write the manifest, after refusing a rerun whose fingerprint differs (unless `force`).
    Raises ConfigError."""
    path = out / MANIFEST
    if path.exists() and not force:
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            before = {}
        if before.get("fingerprint") != manifest["fingerprint"]:
            changed = sorted(
                name
                for name in set(before.get("settings", {})) | set(manifest["settings"])
                if before.get("settings", {}).get(name) != manifest["settings"].get(name)
            )
            raise ConfigError(
                f"{out} holds results of a different batch (changed: "
                f"{', '.join(changed) or 'fingerprint'})",
                file=str(path),
                fix="use another --out, or --force to keep going with the new settings",
            )
    out.mkdir(parents=True, exist_ok=True)
    write_json(path, dict(manifest), fsync=True)


def read_manifest(out: Path) -> dict[str, Any]:
    path = out / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"no batch in {out}", file=str(path), fix="run massgen batch first"
        ) from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"manifest is not JSON ({error.msg})", file=str(path)) from None
    return data if isinstance(data, dict) else {}
