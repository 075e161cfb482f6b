"""Compatibility: `from massgen.logger_config import logger`, as tool files written for the
predecessor import it (its computer-use and browser tools do). It is loguru's logger,
which massgen logs with too, so such a tool's messages land in the run's debug log."""

from loguru import logger

__all__ = ["logger"]
