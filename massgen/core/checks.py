"""A candidate answer's check (`verifier:`): passed, failed, or unchecked, and what it said.

`unchecked` covers everything that is not a verdict: the verifier timed out, crashed, was
not found, or had no sandbox. It never counts as a pass; it ranks between the two
(`RANK`), so a failing answer never beats a passing one, and an answer nobody could check
is not punished like one that failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    UNCHECKED = "unchecked"


# Lower ranks first when the winner is chosen (`coordination/winner.py`).
RANK = {Verdict.PASSED: 0, Verdict.UNCHECKED: 1, Verdict.FAILED: 2}

# The default bound on what a check's output keeps (`verifier.max_output_chars`).
DEFAULT_OUTPUT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Check:
    verdict: Verdict
    note: str = ""  # how it ended, short: "exit 1", "timed out after 30s", "crashed: ..."
    excerpt: str = ""  # the verifier's output, bounded (`bounded`)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED

    def describe(self) -> str:
        """ "passed", "failed (exit 1)", "unchecked (timed out after 30s)"."""
        return f"{self.verdict} ({self.note})" if self.note else str(self.verdict)


def unchecked(note: str) -> Check:
    return Check(Verdict.UNCHECKED, note)


def bounded(text: str, limit: int = DEFAULT_OUTPUT_CHARS) -> str:
    """`text` within `limit` characters: its head and tail, with what was left out said."""
    text = text.strip()
    if len(text) <= limit:
        return text
    note = f"\n[… {len(text) - limit:,} characters left out …]\n"
    room = max(limit - len(note), 2)
    head = room // 2
    return text[:head] + note + text[len(text) - (room - head) :]


def rank(check: Check | None) -> int:
    """An answer with no check yet ranks as unchecked."""
    return RANK[check.verdict if check else Verdict.UNCHECKED]


def tally(checks: Iterable[Check]) -> str:
    """ "2 passed, 1 failed" (in rank order; none: "")."""
    counts = Counter(check.verdict for check in checks)
    return ", ".join(f"{counts[v]} {v}" for v in RANK if counts[v])
