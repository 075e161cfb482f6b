"""Team configs loaded once and reused while nothing they are read from has changed.

Every request (`massgen serve`) and tool call (`massgen mcp`) names a team, and loading
it (read, parse, expand, validate, check the models) costs milliseconds on the request's
critical path: `bench/surfaces.py` measured it at 3 to 4 ms of the latency a served run
adds. A load is reused while the config file, the `.env` files, the working directory
and the environment are as they were, and for at most `MAX_AGE_S`, so what loading also
checks (a local model still installed) is checked again within seconds. An edit to the
config is seen by the next request. A config that fails to load is never kept.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from massgen.config import loader, presets
from massgen.core.errors import ConfigError
from massgen.runs.loading import ConfigLike, LoadedConfig, load

MAX_AGE_S = 5.0
MAX_KEPT = 64  # teams kept; `/v1/models` loads every listed one

Stamp = tuple[object, ...]


class FreshLoads:
    """`load(config)`, reused while `_stamp(config)` is unchanged and younger than `max_age_s`."""

    def __init__(
        self,
        max_age_s: float = MAX_AGE_S,
        limit: int = MAX_KEPT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_age_s, self.limit, self._clock = max_age_s, limit, clock
        self._kept: OrderedDict[str, tuple[Stamp, float, LoadedConfig]] = OrderedDict()

    def load(self, config: ConfigLike) -> LoadedConfig:
        """Raises ConfigError, as `massgen.runs.loading.load`."""
        if not isinstance(config, str | Path | None):
            return load(config)  # a dict or a config in memory: nothing to watch
        key, stamp, now = str(config), _stamp(config), self._clock()
        kept = self._kept.get(key)
        if stamp is not None and kept and kept[0] == stamp and now - kept[1] < self.max_age_s:
            self._kept.move_to_end(key)
            return kept[2]
        loaded = load(config)
        if stamp is not None:
            self._kept[key] = (stamp, now, loaded)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return loaded


def _stamp(config: str | Path | None) -> Stamp | None:
    """What a load of `config` was read from, as it stands; None: not a file (yet)."""
    if config is None:
        cwd, home = Path.cwd(), Path.home()
        files = [cwd / ".massgen" / "config.yaml", home / ".config" / "massgen" / "config.yaml"]
    else:
        try:
            files = [presets.resolve_config_arg(str(config))]
        except ConfigError:
            return None  # loading says what is wrong
    files += loader.env_files()
    return (str(Path.cwd()), *(_file(f) for f in files), hash(frozenset(os.environ.items())))


def _file(path: Path) -> tuple[object, ...]:
    try:
        info = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ino)
