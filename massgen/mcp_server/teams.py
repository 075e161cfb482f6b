"""The teams `ask_team` may name, and which of them can run on this machine.

The names and the rule are `massgen serve`'s (`serve/teams.py`): `massgen` for the served
config, `@examples/NAME` for a preset, `NAME` for a file in `--teams-dir`; a team can run
here when its config loads and every agent has its API key. `/v1/models` lists the same.
"""

from __future__ import annotations

from massgen.serve.teams import Runnable, load_runnable, missing, runnable

__all__ = ["Runnable", "load_runnable", "missing", "runnable"]
