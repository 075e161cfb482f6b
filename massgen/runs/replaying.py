"""Record and replay for a run: every member's backend journalled on the run's tape
(`backends/replay.py`), answered from a recorded run's tape when one is given (`--replay`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from massgen.backends.replay import (
    JOURNAL,
    Record,
    Tape,
    TapedBackend,
    backend_identity,
    read_record,
)
from massgen.config.schema import AgentConfig, OrchestratorConfig

if TYPE_CHECKING:
    from massgen.coordination.agent import Member


def read(replay: Path | None) -> Record | None:
    """The record in the log directory `replay` (None: no replay). Raises ConfigError when
    it holds none."""
    return read_record(Path(replay)) if replay is not None else None


def open_tape(log_dir: Path | None, record: Record | None) -> Tape:
    """The run's tape: journalled into `log_dir` (nowhere without one), answering from
    `record` when there is one."""
    return Tape(log_dir / JOURNAL if log_dir is not None else None, record)


def attach(members: Sequence[Member], agents: Sequence[AgentConfig], tape: Tape) -> list[Member]:
    """Each member with its backend on the tape (`agents`: the config's, in member order)."""
    by_id = {agent.id: agent for agent in agents}
    taped = []
    for member in members:
        spec = by_id[member.id].backend
        identity = backend_identity(spec.type, spec.model, spec.base_url)
        backend = TapedBackend(member.backend, tape, identity, member.id)
        taped.append(dataclasses.replace(member, backend=backend))
    return taped


def seeded(settings: OrchestratorConfig, tape: Tape) -> OrchestratorConfig:
    """The recorded run's coordination seed (answer order, labels), unless the config sets
    one: a replay must shuffle as the recording did."""
    if settings.seed is not None or tape.seed is None:
        return settings
    return settings.model_copy(update={"seed": tape.seed})
