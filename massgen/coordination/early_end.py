"""An attempt that ends before every live agent has voted: its first answers agree
(`agreement.py`), or, with `when_split: rank`, they are ranked (`ranking.py`).

The orchestrator asks after each change to the board; neither applies to a team with
workspaces (there an answer is its files too, and the presenter writes them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from massgen.config.schema import OrchestratorConfig
from massgen.coordination import first_answers
from massgen.coordination.agreement import Agreement, ends_run
from massgen.coordination.board import Answer
from massgen.coordination.checks import failed_labels
from massgen.coordination.ranking import Ranked, first_passing, settle
from massgen.core.checks import Check


def agreed(
    answers: Sequence[Answer],
    live: Sequence[str],
    settings: OrchestratorConfig,
    verdicts: Mapping[str, Check] | None,
) -> Agreement | None:
    """The live agents' first answers all say the same: the attempt ends on them."""
    failed = failed_labels(verdicts or {})
    return ends_run(answers, live, settings.agreement, failed, settings.agreement_quorum)


def ranked(
    answers: Sequence[Answer],
    live: Sequence[str],
    settings: OrchestratorConfig,
    verdicts: Mapping[str, Check] | None,
    order: Sequence[str],
) -> Ranked | None:
    """With `when_split: rank`, every live first answer is in and none agreed: the
    attempt ends ranked, on the first that passed its check where they came one by one."""
    if settings.when_split != "rank" or len(order) < 2:
        return None
    if first_answers.one_by_one(settings, verdicts is not None):
        first = first_passing(answers, live, verdicts or {}, order)
        if first is not None:
            return first
    return settle(answers, live, settings.agreement, verdicts, order)
