"""The recorded run: a turn's log directory, derived from the event stream alone.

The names below load on first use (PEP 562): `record.state` and `record.text`, which the
terminal views fold events with, must not import the writer (yaml, tempfile) before the
app's first frame.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see massgen/__init__.py
if TYPE_CHECKING:
    from massgen.record.recorder import Recorder, new_log_dir
    from massgen.record.table import coordination_table, table_from_log

_HOME_OF = {
    "Recorder": "massgen.record.recorder",
    "new_log_dir": "massgen.record.recorder",
    "coordination_table": "massgen.record.table",
    "table_from_log": "massgen.record.table",
}
__all__ = ["Recorder", "coordination_table", "new_log_dir", "table_from_log"]


def __getattr__(name: str) -> object:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'massgen.record' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
