"""execution_metadata.yaml: how the run was started, with secrets masked."""

from __future__ import annotations

import os
import platform
import re
import sys
from typing import Any

from massgen.core.version import VERSION
from massgen.record.text import iso

MASK = "***"

# `max_tokens` must survive, `hf_token` must not: a token key *ends* in "token".
_SECRET_KEY = re.compile(
    r"api_?key|secret|passw(or)?d|credential|private_key|^authorization$|(^|_)token$"
)


def is_secret_key(key: str) -> bool:
    norm = key.lower().replace("-", "_").lstrip("_")
    if norm.endswith("_env"):  # names an environment variable, not its value
        return False
    return _SECRET_KEY.search(norm) is not None


def redact(value: Any) -> Any:
    """A copy of `value` with every non-empty value under a secret-looking key masked."""
    if isinstance(value, dict):
        return {k: _redact_item(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def _redact_item(key: str, value: Any) -> Any:
    if is_secret_key(key) and value not in (None, ""):
        return MASK
    return redact(value)


def redact_args(args: list[str]) -> list[str]:
    """Mask `--api-key X` and `--api-key=X` style arguments."""
    out: list[str] = []
    mask_next = False
    for arg in args:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        flag, eq, _ = arg.partition("=")
        secret = flag.startswith("-") and is_secret_key(flag.lstrip("-"))
        if secret and eq:
            out.append(f"{flag}={MASK}")
        else:
            out.append(arg)
            mask_next = secret
    return out


def massgen_version() -> str:
    return VERSION


def execution_metadata(
    *,
    question: str,
    config_raw: dict[str, Any] | None,
    config_path: str | None,
    cli_args: list[str] | None,
    log_dir: str,
    start: float,
) -> dict[str, Any]:
    return {
        "question": question,
        "start_time": iso(start),
        "log_dir": log_dir,
        "config_path": config_path,
        "config": redact(config_raw),
        "cli_args": redact_args(list(cli_args)) if cli_args is not None else None,
        "python_version": sys.version.split()[0],
        "massgen_version": massgen_version(),
        "platform": platform.platform(),
        "working_dir": os.getcwd(),
    }
