"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_text(path: Path, text: str, *, fsync: bool = False) -> None:
    """Write `text` to `path` via a temp file in the same directory and `os.replace`.

    The temp file must live beside the target: `os.replace` is only atomic within one
    filesystem.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_text(data: Any) -> str:
    """How the log's JSON files are written: indented, UTF-8 as it is."""
    return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"


def write_json(path: Path, data: Any, *, fsync: bool = False) -> None:
    write_text(path, json_text(data), fsync=fsync)
