"""Team configs of the tests: agents on the loopback fake provider."""

from __future__ import annotations

from typing import Any


def member(agent: str, base_url: str, model: str = "m", **backend: Any) -> dict[str, Any]:
    """An agent of a team config that talks Chat Completions to the fake at `base_url`."""
    settings = {"type": "chatcompletion", "base_url": base_url, "api_key": "k", "model": model}
    return {"id": agent, "backend": {**settings, **backend}}
