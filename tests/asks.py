"""The permission ask the approver tests answer: an agent wants to run `git push origin`."""

from __future__ import annotations

from pathlib import Path

from massgen.core.effects import Effect, Run
from massgen.permissions.approval import ApprovalRequest


def git_push(*also: Effect) -> ApprovalRequest:
    """`careful` asks to push (high risk); `also`: more effects the call would have."""
    return ApprovalRequest(
        agent="careful",
        tool="execute_command",
        arguments='{"command": "git push origin"}',
        effects=(Run(("git", "push", "origin"), Path("/w")), *also),
        risk="high",
        reason="commands not known to be safe are asked",
    )
