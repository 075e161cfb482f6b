"""How a team run gets its permission engine: `engine_for(config, ...)` and `guard(...)`.

    engine = engine_for(config, log_dir=run.log_dir, approver=run.approver, emit=...)
    boxes = guard(boxes, engine, workspaces)      # every agent's toolbox, behind Guarded

The approver is the caller's (the live view, the web view) when it gives one; else the
config's `approval_mode: file` handshake; else the headless policy `automation_default`
(`risk-based` by default). Rules come from the config's `permissions:` blocks (team and
agent), the role preset, and `.massgen/settings.json` / `.massgen/settings.local.json`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from massgen.config.permissions import PermissionsConfig, Role
from massgen.config.schema import MassgenConfig
from massgen.core.toolbox import Toolbox, ToolContext
from massgen.log import logger
from massgen.permissions import grants, rules
from massgen.permissions.approval import Approver
from massgen.permissions.engine import Book, Call, Decision, Engine
from massgen.permissions.ledger import FILE, Ledger, Record
from massgen.permissions.paths import around
from massgen.permissions.policy import PolicyApprover
from massgen.permissions.risk import Zones

if TYPE_CHECKING:
    from massgen.workspace.team import Workspaces

_READ_ONLY = Book(
    deny=rules.parse_all(["write_file(*)", "command(*)"], Path("/")),
    ask=rules.parse_all(["read_url(*)"], Path("/")),
)
OFF_WARNING = (
    "the permission engine is OFF (`permissions: false`): tool calls run without checks, "
    "approvals or an audit record"
)


def warn(message: str) -> None:
    print(f"massgen: warning: {message}", file=sys.stderr)
    logger.warning(message)


def settings_of(config: MassgenConfig) -> PermissionsConfig:
    """The run-wide settings: the top-level block, else the first agent's (whose `enabled`
    is that agent's alone), else defaults."""
    if config.permissions is not None:
        return config.permissions
    blocks = [a.backend.permissions for a in config.agents if a.backend.permissions]
    return blocks[0].model_copy(update={"enabled": True}) if blocks else PermissionsConfig()


def engine_for(
    config: MassgenConfig,
    *,
    log_dir: Path | None,
    approver: Approver | None = None,
    emit: Callable[[Call, Decision], None] | None = None,
    project: Path | None = None,
    session: set[str] | None = None,
) -> Engine | None:
    """The run's engine, or None (loudly) when the config turns it off. `session`: the
    "for this session" grants to start from and add to (a chat's, across its turns).

    Raises:
        ConfigError: a settings file with a rule that can never match, or an approval
            mode this build lacks.
    """
    settings = settings_of(config)
    ledger = Ledger(log_dir / FILE if settings.audit and log_dir is not None else None)
    if not settings.enabled:
        _off(ledger, "*", OFF_WARNING)
        return None
    project = project or Path.cwd()
    files = _file_rules(project, Path(settings.settings_path))
    team = _book(config.permissions, project).plus(files)
    books, roles = _agents_books(config, settings, team, project, ledger)
    return Engine(
        books=books,
        default_book=team,
        approver=approver or headless_approver(settings),
        ledger=ledger,
        max_consecutive_auto=settings.max_consecutive_auto,
        grants_path=project / settings.settings_path if settings.persist_approvals else None,
        project=project,
        emit=emit,
        roles=roles,
        session=session,
    )


def _agents_books(
    config: MassgenConfig, settings: PermissionsConfig, team: Book, project: Path, ledger: Ledger
) -> tuple[dict[str, Book], dict[str, Role]]:
    """Each agent's rule book (the team's, its role's, its own) and role; an agent that
    turns the engine off has neither, and that is said."""
    books, roles = {}, {}
    for agent in config.agents:
        own = agent.backend.permissions
        if own is not None and not own.enabled:
            _off(ledger, agent.id, f"the permission engine is OFF for agent `{agent.id}`")
            continue
        role = (own.role if own else None) or settings.role or "read-write"
        roles[agent.id] = role
        book = _READ_ONLY.plus(team) if role == "read-only" else team
        books[agent.id] = book.plus(_book(own, project))
    return books, roles


def _off(ledger: Ledger, agent: str, message: str) -> None:
    """Off is said on stderr and written to the ledger in the log dir, never silent."""
    warn(message)
    with contextlib.suppress(OSError):
        ledger.append(Record(agent, "*", "", (), "off", "rule", message))


def unguarded(config: MassgenConfig) -> frozenset[str]:
    """Agents whose own block turns the engine off."""
    return frozenset(
        a.id for a in config.agents if a.backend.permissions and not a.backend.permissions.enabled
    )


def headless_approver(settings: PermissionsConfig) -> Approver:
    """The predecessor's `approval_mode: file` is the file handshake (a responder writes
    the answers); otherwise the `automation_default` policy answers."""
    if settings.approval_mode == "file":
        from massgen.permissions import handshake

        return handshake.from_config(settings.approval_dir)
    return PolicyApprover(settings.automation_default)


def _book(block: PermissionsConfig | None, project: Path) -> Book:
    if block is None:
        return Book()
    r = block.rules
    return Book(*(rules.parse_all(getattr(r, b), project) for b in rules.BUCKETS))


def _file_rules(project: Path, local: Path) -> Book:
    paths = dict.fromkeys([project / grants.SETTINGS, project / grants.LOCAL, project / local])
    book = Book()
    for path in paths:
        found = grants.load(path, project)
        book = book.plus(
            Book(*(rules.parse_all(getattr(found, b), project) for b in rules.BUCKETS))
        )
    return book


def zones_of(
    workspaces: Workspaces | None, extra: tuple[Path, ...] = ()
) -> Callable[[ToolContext], Zones]:
    """The managed paths of a call: the caller's workspace, the snapshot store, the
    previous turn, the context paths, and `extra` (canonical, read-only: skill folders)."""

    def zones(ctx: ToolContext) -> Zones:
        import os

        own = Path(os.path.realpath(ctx.workspace)) if ctx.workspace is not None else None
        if workspaces is None:
            return Zones(workspace=own, readable=extra)
        readable = [Path(os.path.realpath(workspaces.store.root)), *extra]
        writable, protected = [], []
        for context in workspaces.contexts.paths if workspaces.contexts else ():
            readable.append(context.root)
            if context.writable:
                writable.append(context.root)
            protected += [*context.protected, context.root / ".git", context.root / ".massgen"]
        return Zones(own, tuple(readable), tuple(writable), tuple(around(protected, own)))

    return zones


def guard(
    boxes: Mapping[str, Toolbox],
    engine: Engine,
    workspaces: Workspaces | None,
    skip: frozenset[str] = frozenset(),
    readable: tuple[Path, ...] = (),
) -> dict[str, Toolbox]:
    """Every agent's toolbox behind the engine (but those in `skip`); `readable`: more
    read-only managed paths (the skill folders)."""
    from massgen.permissions.guarded import Guarded

    zones = zones_of(workspaces, readable)
    return {a: box if a in skip else Guarded(box, engine, zones) for a, box in boxes.items()}
