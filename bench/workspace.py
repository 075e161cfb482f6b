"""Snapshot and view cost of workspaces: 3 agents over 1,000 files / 50 MB by default.

Each agent starts from the same project (files older than `store.RACY_SECONDS`, as a real
project's are), then publishes three answers: the first snapshot, one with nothing
changed, one after changing `changed` files. A viewer then reads every peer's snapshot
through the file tools, which serve it from the store: nothing is copied per viewer.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.workspace import store as store_module
from massgen.workspace.team import Workspaces


@dataclass(frozen=True, slots=True)
class SnapshotStep:
    step: str
    seconds: list[float]  # per agent
    files_read: int  # files hashed and stored, all agents together
    store_bytes: int  # the store's objects after this step


@dataclass(frozen=True, slots=True)
class WorkspaceCost:
    files: int
    total_bytes: int
    agents: int
    changed: int
    steps: list[SnapshotStep]
    view_seconds: float  # one viewer lists and reads one file of every peer snapshot
    copied_for_views: int  # files written into viewers' workspaces to serve the views: 0


def snapshot_cost(
    files: int = 1000, total_bytes: int = 50 * 1024 * 1024, agents: int = 3, changed: int = 10
) -> WorkspaceCost:
    with tempfile.TemporaryDirectory(prefix="massgen-bench-ws-") as scratch:
        ws = Workspaces(Path(scratch), "bench", {f"a{i}": f"w{i}" for i in range(agents)})
        ids = list(ws.agents)
        _project(ws, ids, files, total_bytes)
        time.sleep(store_module.RACY_SECONDS + 0.1)
        steps = [_publish(ws, ids, 1, "first snapshot")]
        steps.append(_publish(ws, ids, 2, "re-snapshot, nothing changed"))
        for agent in ids:
            for n in range(changed):
                path = ws.path(agent) / f"d{n % 10}" / f"f{n}.bin"
                path.write_bytes(f"{agent} changed {n}".encode() + path.read_bytes()[32:])
        steps.append(_publish(ws, ids, 3, f"re-snapshot, {changed} files changed"))
        before = _count(ws.path(ids[0]))
        view = asyncio.run(_view(ws, ids[0]))
        copied = _count(ws.path(ids[0])) - before
    return WorkspaceCost(files, total_bytes, agents, changed, steps, view, copied)


def _project(ws: Workspaces, ids: list[str], files: int, total_bytes: int) -> None:
    rng = random.Random(7)
    size = max(1, total_bytes // files)
    for n in range(files):
        data = rng.randbytes(size)
        for agent in ids:
            path = ws.path(agent) / f"d{n % 10}" / f"f{n}.bin"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)


def _publish(ws: Workspaces, ids: list[str], version: int, step: str) -> SnapshotStep:
    read_before = _files_read(ws)
    seconds = []
    for agent in ids:
        started = time.perf_counter()
        ws.published(agent, f"{agent}.{version}")
        seconds.append(time.perf_counter() - started)
    objects = (ws.store.root / "objects").rglob("*")
    stored = sum(p.stat().st_size for p in objects if p.is_file())
    return SnapshotStep(step, seconds, _files_read(ws) - read_before, stored)


def _files_read(ws: Workspaces) -> int:
    return sum(s.files_read for s in ws._snapshotters.values())


async def _view(ws: Workspaces, viewer: str) -> float:
    ctx = ToolContext(agent=viewer, workspace=ws.path(viewer))
    started = time.perf_counter()
    for label, manifest in ws.snapshots().items():
        await ws.files.call(ToolCall("l", "list_dir", json.dumps({"path": f"peers/{label}"})), ctx)
        first = next(iter(manifest.files))
        args = json.dumps({"path": f"peers/{label}/{first}", "limit": 1})
        await ws.files.call(ToolCall("r", "read_file", args), ctx)
    return time.perf_counter() - started


def _count(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file())
