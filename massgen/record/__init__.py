"""The recorded run: a turn's log directory, derived from the event stream alone."""

from massgen.record.recorder import Recorder, new_log_dir
from massgen.record.table import coordination_table, table_from_log

__all__ = ["Recorder", "coordination_table", "new_log_dir", "table_from_log"]
