"""massgen's logger. Silent unless the CLI (or the user) enables it.

A library must not print to the user's stderr on its own; the CLI turns logging on with
`--debug` and writes to the run's log directory.
"""

from loguru import logger

logger.disable("massgen")

__all__ = ["logger"]
