"""A run's workspaces: one directory per agent that has one, and the run's store.

    .massgen/workspaces/<run>/<cwd>/    an agent's workspace, created on demand, never wiped
    .massgen/workspaces/<run>/.final/   the presenter's, restored from the winner's snapshot
    .massgen/snapshots/<run>/           the store: objects/ and manifests/<label>.json

`published` records a snapshot when an answer is published (the orchestrator calls it);
peers read it under the answer's label through the file tools. A restart leaves the
workspace as the agent left it. `presenting` gives the final presenter a workspace that
holds exactly the files its peers voted for; `save_final` copies the final workspace
into the log directory (`final/workspace/`). In a chat, `previous` (the last turn's
final workspace, saved with the session) is recorded in the store as `previous` and
read through the file tools under `previous/`, read-only.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from massgen.config.schema import MassgenConfig, workspace_names
from massgen.core.types import FileChanges
from massgen.log import logger
from massgen.workspace.changes import between
from massgen.workspace.context import ContextPaths
from massgen.workspace.files import FileTools
from massgen.workspace.paths import PREVIOUS
from massgen.workspace.store import Limits, Manifest, Snapshotter, Store

FINAL = ".final"


def run_name(log_dir: Path | None) -> str:
    """The run's name under `.massgen/`: its log directory's (`log_<ts>`), else a new one."""
    if log_dir is None:
        return f"run_{datetime.now().strftime('%Y%m%d_%H%M%S_%f')}"
    return log_dir.parent.name if log_dir.name.startswith("turn_") else log_dir.name


class Workspaces:
    """The workspaces of one run. `dirs`: agent id -> its directory's name (`cwd`)."""

    def __init__(
        self,
        base: Path,
        run: str,
        dirs: Mapping[str, str],
        limits: Limits | None = None,
        contexts: ContextPaths | None = None,
        previous: Path | None = None,
        *,
        root: Path | None = None,
        store: Path | None = None,
    ) -> None:
        """`root`/`store`: where the workspaces and the store lie instead (a subagent's
        workspaces inside its parent's, its store beside the parent's store)."""
        self.root = root or base / "workspaces" / run
        self.store = Store(store or base / "snapshots" / run)
        self.limits = limits or Limits()
        self.previous: Manifest | None = None
        if previous is not None and previous.is_dir():
            self.previous = Snapshotter(self.store, previous, self.limits).take()
            self.store.save(PREVIOUS, self.previous)
        # Turns of one chat share this root: an earlier turn's presentation is not ours.
        shutil.rmtree(self.root / FINAL, ignore_errors=True)
        self._dirs = dict(dirs)
        self._snapshotters: dict[str, Snapshotter] = {}
        self._published: dict[str, Manifest] = {}
        self._latest: dict[str, Manifest] = {}  # agent -> its last answer's snapshot
        self.contexts = contexts
        self.files = FileTools(self, contexts)

    @classmethod
    def for_config(
        cls, config: MassgenConfig, base: Path, run: str, previous: Path | None = None
    ) -> Workspaces | None:
        """The run's workspaces; with context paths, their baseline is taken now.
        `previous`: the previous chat turn's final workspace, read-only under `previous/`."""
        dirs = workspace_names(config.agents)
        if not dirs:
            return None
        contexts = ContextPaths.of(config.orchestrator.context_paths)
        contexts.baseline()
        return cls(base, run, dirs, contexts=contexts, previous=previous)

    @property
    def agents(self) -> tuple[str, ...]:
        return tuple(self._dirs)

    def path(self, agent: str) -> Path:
        """The agent's workspace, created on first use and kept for the whole run."""
        path = self.root / self._dirs[agent]
        if agent not in self._latest:  # first use: what its first answer is compared with
            path.mkdir(parents=True, exist_ok=True)
            self._latest[agent] = self._baseline(agent, path)
        return path

    def _baseline(self, agent: str, path: Path) -> Manifest:
        """The workspace as this run found it: empty, or an earlier chat turn's files."""
        if not any(path.iterdir()):
            return Manifest()
        try:
            return self._snapshotter(agent).take()
        except OSError as error:
            logger.warning("workspace of {} not read at its start: {}", agent, error)
            return Manifest()

    def _snapshotter(self, agent: str) -> Snapshotter:
        snapshotter = self._snapshotters.get(agent)
        if snapshotter is None:
            directory = self.root / self._dirs[agent]
            snapshotter = Snapshotter(self.store, directory, self.limits)
            self._snapshotters[agent] = snapshotter
        return snapshotter

    def snapshots(self) -> Mapping[str, Manifest]:
        return self._published

    def published(self, agent: str, label: str) -> FileChanges | None:
        """Record `agent`'s workspace as the snapshot of its answer `label`, and say what
        changed since its previous answer. A snapshot that cannot be taken (a full disk) is
        logged; the answer still stands."""
        if agent not in self._dirs:
            return None
        self.path(agent)  # its baseline, if it never used its workspace
        try:
            manifest = self._snapshotter(agent).take()
            self.store.save(label, manifest)
        except OSError as error:
            logger.warning("snapshot of {} not recorded: {}", label, error)
            return None
        self._published[label] = manifest
        before, self._latest[agent] = self._latest.get(agent), manifest
        return between(self.store, before, manifest)

    def new_attempt(self) -> None:
        """The coordination starts over (an evaluation asked for it): the answers of the
        attempt before leave `peers/`; their labels are given out again. Each agent's
        workspace stays as it was."""
        self._published.clear()

    def reload(self, labels: list[str]) -> None:
        """A resumed run: the snapshots its earlier attempts published, from the store."""
        for label in labels:
            manifest = self.store.load(label)
            if manifest is not None:
                self._published[label] = manifest

    def presenting(self, agent: str, label: str) -> Path | None:
        """The presenter's workspace: a fresh copy of the snapshot of `label` (its own
        workspace is left as it is)."""
        manifest = self._published.get(label)
        if agent not in self._dirs or manifest is None:
            return None
        final = self.root / FINAL
        if final.exists():
            shutil.rmtree(final)  # ours alone: left by an earlier presentation of this run
        final.mkdir(parents=True)
        self.store.restore(manifest, final)
        return final

    def presenting_directly(self, agent: str) -> Path | None:
        """The presenter's workspace when no answer came before it
        (`skip_coordination_rounds`): a copy of its own workspace as it is now, or, after
        a restart, the workspace the presentation before left (its files stay)."""
        if agent not in self._dirs:
            return None
        final = self.root / FINAL
        if not final.is_dir():
            shutil.copytree(self.path(agent), final, symlinks=True)
        return final

    def save_final(self, log_dir: Path | None, winner_label: str | None) -> Path | None:
        """Snapshot the final workspace (the presenter's, else the winner's snapshot) as
        `final` in the store, and copy it to `<log_dir>/final/workspace/`. Returns where
        the final workspace now lies (without a log dir, this run's `.final/`)."""
        final = self.root / FINAL
        if final.is_dir():
            manifest = Snapshotter(self.store, final, self.limits).take()
        elif winner_label in self._published:
            manifest = self._published[winner_label]
        else:
            return None
        self.store.save("final", manifest)
        if log_dir is None:
            if not final.is_dir():
                final.mkdir(parents=True)
                self.store.restore(manifest, final)
            return final
        target = log_dir / "final" / "workspace"
        target.mkdir(parents=True, exist_ok=True)
        self.store.restore(manifest, target)
        return target
