"""The Python API: `run()` for a result, `stream()` for the events as they happen.

    result = massgen.run("question", config="team.yaml")
    async for event in massgen.stream("question", config="@examples/three_agents"): ...

The CLI is built on the same `TeamRun`, so both behave alike. This module is the public
face only: a run is put together in `massgen/runs/` (`runs/turn.py` holds `TeamRun`).
"""

from __future__ import annotations

from massgen.core.types import Usage as Usage
from massgen.runs.loading import ConfigLike, LoadedConfig, load
from massgen.runs.result import RoundUsage as RoundUsage
from massgen.runs.result import RunResult
from massgen.runs.result import VoteRecord as VoteRecord
from massgen.runs.turn import Sink as Sink
from massgen.runs.turn import TeamRun, arun, run, stream

__all__ = ["ConfigLike", "LoadedConfig", "RunResult", "TeamRun", "arun", "load", "run", "stream"]
