"""`permissions:`, the permission engine's settings (`massgen/permissions/`).

At the top level it holds for the whole team; under an agent's `backend:` (where the
predecessor put it) it adds that agent's role and rules. The engine is on without it;
`permissions: false` (or `enabled: false`) turns it off, with a warning.

    permissions:
      role: read-write                 # or read-only (researcher / implementer: aliases)
      rules:
        allow: ["Command(pytest *)", "Read(./docs/**)"]
        ask:   ["Command(git push *)"]
        deny:  ["Read(./secrets/**)", "mcp__github__delete_repo"]
      automation_default: risk-based   # headless answer to an ask: risk-based | deny-all | allow-all
      approval_mode: policy            # policy | file (the predecessor's file handshake)
      approval_dir: .massgen/approvals
      audit: true                      # the ledger, <log dir>/permissions.jsonl
      max_consecutive_auto: 20         # automatic approvals in a row before a deny
      persist_approvals: true          # "always" grants go to settings_path
      settings_path: .massgen/settings.local.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["read-only", "read-write"]
_ROLE_ALIASES = {"researcher": "read-only", "implementer": "read-write"}


class RulesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    @field_validator("allow", "ask", "deny")
    @classmethod
    def _can_match(cls, texts: tuple[str, ...]) -> tuple[str, ...]:
        from massgen.permissions.rules import FIX, RuleError, parse

        for index, text in enumerate(texts):
            try:
                parse(text, Path.cwd())
            except RuleError as error:
                raise ValueError(f"[{index}] {error}; {FIX}") from None
        return texts


class PermissionsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    role: Role | None = None
    rules: RulesConfig = RulesConfig()
    automation_default: Literal["risk-based", "deny-all", "allow-all"] = "risk-based"
    approval_mode: Literal["policy", "file"] = "policy"
    approval_dir: str = ".massgen/approvals"
    audit: bool = True
    max_consecutive_auto: int | None = Field(default=None, ge=1)
    persist_approvals: bool = True
    settings_path: str = ".massgen/settings.local.json"

    @field_validator("role", mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        return _ROLE_ALIASES.get(value, value) if isinstance(value, str) else value


def permissions_block(value: Any) -> Any:
    """`permissions: false` / `true` as a block."""
    if isinstance(value, bool):
        return {"enabled": value}
    return value
