"""The headless approvers: a policy answers the engine's asks when no person can.

risk-based (default)  low and medium risk defaults are allowed once; high risk, and
                      every explicit `ask` rule, are denied ("ask" counts as deny when
                      nobody can answer)
deny-all              every ask is denied
allow-all             every ask is allowed once (the floor and deny rules still hold)
"""

from __future__ import annotations

from typing import Literal

from massgen.permissions.approval import ApprovalRequest, Choice, Operator

Mode = Literal["risk-based", "deny-all", "allow-all"]
MODES: tuple[Mode, ...] = ("risk-based", "deny-all", "allow-all")
# The reason prefix the engine gives an ask that an `ask` rule made.
ASK_RULE = "ask rule "


class PolicyApprover:
    operator: Operator = "policy"

    def __init__(self, mode: Mode = "risk-based") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown approval policy {mode!r}; use one of {', '.join(MODES)}")
        self.mode = mode

    async def ask(self, request: ApprovalRequest) -> Choice:
        if self.mode == "allow-all":
            return Choice.ONCE
        if self.mode == "deny-all" or request.reason.startswith(ASK_RULE):
            return Choice.DENY
        return Choice.DENY if request.risk == "high" else Choice.ONCE
