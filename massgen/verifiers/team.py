"""The run's verifier, as coordination calls it (`coordination/checks.py: Verifier`).

A check gets the answer's files as they were published: a fresh copy of its workspace
snapshot (removed after the check), or, for the final presentation, the presenter's
workspace. Every check is bounded by `timeout_seconds` here too, whatever its kind does,
and its output by `max_output_chars`.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from massgen.config.verifier import VerifierConfig
from massgen.core.checks import Check, bounded, unchecked
from massgen.verifiers.command import CommandVerifier
from massgen.verifiers.function import FunctionVerifier
from massgen.workspace.team import Workspaces

# Past its own timeout, how long a check may take to report (a command's kill grace).
GRACE_SECONDS = 5.0


class Kind(Protocol):
    async def check(self, answer: str, question: str, workspace: Path | None) -> Check: ...


class TeamVerifier:
    def __init__(
        self, kind: Kind, config: VerifierConfig, workspaces: Workspaces | None = None
    ) -> None:
        self.kind = kind
        self.config = config
        self.workspaces = workspaces

    async def check(
        self, answer: str, question: str, *, label: str | None = None, workspace: Path | None = None
    ) -> Check:
        """`label`: the published answer whose snapshot the check reads; `workspace`: a
        directory to read instead (the presenter's)."""
        limit = self.config.timeout_seconds + GRACE_SECONDS
        try:
            async with asyncio.timeout(limit), self._files(label, workspace) as files:
                check = await self.kind.check(answer, question, files)
        except TimeoutError:
            return unchecked(f"timed out after {self.config.timeout_seconds:g}s")
        except OSError as error:  # the snapshot could not be copied out
            return unchecked(f"the answer's files could not be read ({error})")
        return Check(
            check.verdict,
            bounded(check.note, 300),
            bounded(check.excerpt, self.config.max_output_chars),
            check.seconds,
        )

    @contextlib.asynccontextmanager
    async def _files(self, label: str | None, workspace: Path | None) -> AsyncIterator[Path | None]:
        if workspace is not None or self.workspaces is None or label is None:
            yield workspace
            return
        manifest = self.workspaces.snapshots().get(label)
        if manifest is None:
            yield None
            return
        with tempfile.TemporaryDirectory(
            prefix="massgen-answer-", ignore_cleanup_errors=True
        ) as copy:
            await asyncio.to_thread(self.workspaces.store.restore, manifest, Path(copy))
            yield Path(copy)


def for_config(
    config: VerifierConfig | None, source: str | None, workspaces: Workspaces | None
) -> TeamVerifier | None:
    """The run's verifier, or None without a `verifier:` block. `source`: the config
    file, beside which a `function`'s module may lie (else in the working directory)."""
    if config is None:
        return None
    kind: Kind
    if config.command is not None:
        kind = CommandVerifier(config.command, config.timeout_seconds, config.max_output_chars)
    else:
        assert config.function is not None  # the config allows exactly one
        # Beside the config file; a config given as data: the directory massgen runs in.
        base = Path(source).resolve().parent if source and Path(source).is_file() else Path.cwd()
        kind = FunctionVerifier(
            config.function, config.timeout_seconds, config.max_output_chars, base
        )
    return TeamVerifier(kind, config, workspaces)
