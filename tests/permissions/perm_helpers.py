"""What the permission tests share: an engine over a temp tree, and a scripted approver."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from massgen.core.effects import Effect, Run
from massgen.permissions.approval import ApprovalRequest, Choice, Operator
from massgen.permissions.engine import Book, Call, Decision, Engine
from massgen.permissions.ledger import Ledger
from massgen.permissions.risk import Zones


class Scripted:
    """An approver that answers from a list (then `DENY`) and remembers what it was asked."""

    def __init__(self, *answers: Choice, operator: Operator = "human") -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []
        self.operator = operator

    async def ask(self, request: ApprovalRequest) -> Choice:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else Choice.DENY


def engine(
    tmp: Path,
    *,
    allow: Iterable[str] = (),
    ask: Iterable[str] = (),
    deny: Iterable[str] = (),
    approver=None,
    **options,
) -> Engine:
    book = Book.of(allow=allow, ask=ask, deny=deny, project=tmp)
    return Engine(
        default_book=book,
        approver=approver,
        ledger=Ledger(tmp / "log" / "permissions.jsonl"),
        project=tmp,
        **options,
    )


def zones(tmp: Path) -> Zones:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    return Zones(workspace=ws.resolve())


async def decide(e: Engine, tmp: Path, *effects: Effect, phase="coordination") -> Decision:
    return await e.decide(Call("alice", "tool", tuple(effects), zones(tmp), phase, "c1", "{}"))


def run(tmp: Path, command: str) -> Run:
    return Run(("/bin/sh", "-c", command), (tmp / "ws").resolve())
