"""The approval step's contract: who answers an "ask", and with what.

The engine builds an `ApprovalRequest` for a call that no rule allowed or denied outright
and whose risk calls for a person. An `Approver` answers it. Headless runs use a policy
approver; the live view, the web view and the file handshake are approvers too. Any
exception from an approver, and any timeout, is a deny (the engine enforces that, not the
approver).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal, Protocol

from massgen.core.effects import Effect
from massgen.core.toolbox import Phase

Risk = Literal["low", "medium", "high"]
# Who made a decision, as the audit ledger records it.
Operator = Literal["floor", "rule", "policy", "human", "error"]


class Choice(enum.StrEnum):
    ONCE = "once"  # allow this call only
    SESSION = "session"  # allow the same effect for the rest of this run / chat session
    ALWAYS = "always"  # allow, and store an allow rule in .massgen/settings.local.json
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    agent: str  # the user's agent id
    tool: str  # the tool's name as offered to the model
    arguments: str  # the call's arguments, as JSON text (bounded for display)
    effects: tuple[Effect, ...]  # what the call would do, paths already canonical
    risk: Risk
    reason: str  # why it is asked: the ask rule, or the risk default
    phase: Phase = "coordination"
    # What is asked, one line each ("run `git push origin main`", "write `/abs/path`").
    details: tuple[str, ...] = ()


class Approver(Protocol):
    # How the ledger names who answered: "human" for a person, "policy" for a policy.
    operator: Operator

    async def ask(self, request: ApprovalRequest) -> Choice: ...
