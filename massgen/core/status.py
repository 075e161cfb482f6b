"""How a run ended, and the one place that turns that into the CLI's exit code.

A `StrEnum`, so status.json, saved sessions and `--automation` output keep the plain
words ("ok", "timeout", ...) they always had.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ExitCode(IntEnum):
    """The exit codes the README promises."""

    OK = 0
    CONFIG = 1  # the user can fix the config, the flags or a missing key
    EXECUTION = 2
    TIMEOUT = 3
    INTERRUPTED = 4
    BUDGET = 5  # the --max-tokens / --max-cost budget ended the run


class Status(StrEnum):
    OK = "ok"
    DEGRADED = "degraded"  # some agents failed; the others answered
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"
    BUDGET = "budget"  # the spending limit stopped it: the best answer so far
    FAILED = "failed"

    @property
    def complete(self) -> bool:
        """The team finished: the answer is the one it chose, not a fallback."""
        return self in (Status.OK, Status.DEGRADED)

    def exit_code(self) -> ExitCode:
        match self:
            case Status.OK | Status.DEGRADED:
                return ExitCode.OK
            case Status.TIMEOUT:
                return ExitCode.TIMEOUT
            case Status.INTERRUPTED:
                return ExitCode.INTERRUPTED
            case Status.BUDGET:
                return ExitCode.BUDGET
            case Status.FAILED:
                return ExitCode.EXECUTION
