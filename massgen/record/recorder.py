"""The recorded-run layout of one turn, written from the event stream alone.

turn_<n>/
  events.jsonl               the journal: every event, one JSON object per line; decided
                             events written before the run acts on them (journal.py)
  coordination_events.json   coordination-level events + session metadata
  coordination_table.txt     one column per agent (see table.py)
  vote.json                  the tally and every vote, with its standing flag
  status.json                live status, rewritten after coordination events (at most
                             20 times a second)
  execution_metadata.yaml    how the run was started (secrets masked)
  agent_<id>/answer_<n>.txt, agent_<id>/votes.json
  final/answer.txt, final/presenter.txt
  generated_personas.yaml    the personas generated before coordination, per agent
  question_paraphrases.yaml  the rephrased question each agent read, per agent
  generated_evaluation_criteria.yaml   the criteria generated before coordination
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from massgen.core import events as ev
from massgen.record.atomic import json_text
from massgen.record.background import Background
from massgen.record.journal import Journal, read_journal
from massgen.record.metadata import execution_metadata
from massgen.record.state import COORDINATION_EVENTS, STATUS_EVENTS, STREAM_EVENTS, RunState
from massgen.record.status import agent_votes, status_document, vote_document
from massgen.record.table import coordination_table
from massgen.record.timeline import timeline_document

LOG_BASE_ENV = "MASSGEN_LOG_BASE_DIR"


def new_log_dir(base: Path | None = None, turn: int = 1) -> Path:
    """Create and return `<base>/log_<YYYYMMDD_HHMMSS_ffffff>/turn_<turn>/`.

    `base` defaults to `$MASSGEN_LOG_BASE_DIR`, else `.massgen/massgen_logs` under the
    current directory. Two runs started in the same microsecond get distinct directories.
    """
    root = base or Path(os.environ.get(LOG_BASE_ENV) or Path.cwd() / ".massgen" / "massgen_logs")
    while True:
        session = Path(root) / f"log_{datetime.now().strftime('%Y%m%d_%H%M%S_%f')}"
        try:
            session.mkdir(parents=True)
            break
        except FileExistsError:
            continue
    turn_dir = session / f"turn_{turn}"
    turn_dir.mkdir()
    return turn_dir


class Recorder:
    """Writes one turn's log directory from its events.

    Call `handle` for every event in order and `close` once at the end (also on Ctrl-C,
    with `interrupted=True`). Stream chunks only append to the buffered events.jsonl;
    every other event flushes it, decided ones are fsynced (`journal.DECIDED`), and
    coordination events rewrite status.json atomically. The files and the fsyncs are the
    work of the recorder's writer thread (`background.py`: status.json rendered when it
    is written, at most once per pause), so `handle` never waits on the disk; `close`
    returns when all of it is on disk. `resumed`: the directory holds an earlier attempt
    of this run; its events are read back first, so every file written (the table,
    vote.json, status.json) covers all attempts.
    Disk errors propagate as `OSError` (from the writer, at the next `handle` or at
    `close`); the caller decides whether logging may fail a run.
    """

    def __init__(
        self,
        log_dir: Path,
        *,
        question: str,
        config_raw: dict[str, Any] | None = None,
        config_path: str | None = None,
        cli_args: list[str] | None = None,
        clock: Callable[[], float] = time.time,
        resumed: bool = False,
        writer: Background | None = None,
    ) -> None:
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._clock = clock  # injectable so tests get fixed timestamps
        self._start = clock()
        self._end: float | None = None
        self._state = RunState(question)
        self._timeline: list[ev.AnyEvent] = []
        self._personas: dict[str, dict[str, str]] = {}  # as generated_personas.yaml says
        self._paraphrases: dict[str, str] = {}  # as question_paraphrases.yaml says
        self._writer = writer or Background()  # `writer`: another disk's (a test's slow one)
        # Held while the state changes and while the writer renders status.json from it.
        self._lock = threading.Lock()
        self._closed = False
        self._events = Journal(self.log_dir / "events.jsonl", writer=self._writer)
        if resumed:
            self._replay_earlier_attempts()
            self._write_status()
            return
        meta = execution_metadata(
            question=question,
            config_raw=config_raw,
            config_path=config_path,
            cli_args=cli_args,
            log_dir=str(self.log_dir),
            start=self._start,
        )
        text = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
        self._writer.put(self.log_dir / "execution_metadata.yaml", text)
        self._write_status()

    def _replay_earlier_attempts(self) -> None:
        for event in read_journal(self._events.path):
            self._state.apply(event)
            if isinstance(event, COORDINATION_EVENTS):
                self._timeline.append(event)

    @property
    def state(self) -> RunState:
        return self._state

    def handle(self, event: ev.AnyEvent) -> None:
        """Record one event. Events arriving after `close` are ignored."""
        if self._closed:
            return
        self._events.append(event)
        with self._lock:
            self._state.apply(event)
        if isinstance(event, STREAM_EVENTS):
            return
        if isinstance(event, COORDINATION_EVENTS):
            self._timeline.append(event)
            self._on_coordination(event)
        if isinstance(event, STATUS_EVENTS):
            self._write_status()

    def flush(self) -> None:
        """Return when every file and journal line recorded so far is on disk."""
        self._writer.flush()

    def close(self, interrupted: bool = False) -> None:
        """Write everything known so far, and return when it is on disk. Idempotent.

        Without a RunFinished the run is marked "interrupted" (or "incomplete" when
        `interrupted` is false), keeping every answer and vote already decided.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._end = self._clock()
            with self._lock:
                self._state.end(interrupted)
            self._write_summary()
            for agent_id in self._state.agents:
                self._write_agent_votes(agent_id)
            self._write_final()
            self._write_status()
        finally:
            try:
                self._events.close()  # the journal synced, and the files above written
            finally:
                self._writer.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(interrupted=exc_type is not None)

    def _on_coordination(self, event: ev.AnyEvent) -> None:
        match event:
            case ev.AnswerPublished():
                answer = self._state.agent(event.agent).answers[-1]
                folder = self._agent_dir(event.agent)
                if self._state.attempt > 1:  # an orchestration restart gives labels out again
                    folder = folder / f"attempt_{self._state.attempt}"
                self._writer.put(folder / f"answer_{answer.version}.txt", event.content)
                if event.diff:  # what it changed in its workspace
                    self._writer.put(folder / f"answer_{answer.version}.diff", event.diff)
            case ev.VoteCast() | ev.VoteInvalidated():
                self._write_agent_votes(event.agent)
            case ev.CoordinationFinished():
                self._write_summary()
            case ev.RunFinished():
                self._write_final()
            case ev.PersonaAssigned():
                self._personas[event.agent] = {"persona": event.persona, "summary": event.summary}
                self._write_yaml("generated_personas.yaml", self._personas)
            case ev.CriteriaGenerated():
                criteria = {"aspiration": event.aspiration, "criteria": list(event.criteria)}
                self._write_yaml("generated_evaluation_criteria.yaml", criteria)
            case ev.QuestionParaphrased():
                self._paraphrases[event.agent] = event.paraphrase
                self._write_yaml("question_paraphrases.yaml", self._paraphrases)
            case _:
                pass

    def _write_yaml(self, name: str, data: Any) -> None:
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
        self._writer.put(self.log_dir / name, text)

    def _agent_dir(self, agent_id: str) -> Path:
        # Agent ids come from the user's config; keep them from escaping the log dir.
        return self.log_dir / f"agent_{re.sub(r'[^A-Za-z0-9_.-]', '_', agent_id)}"

    def _write_json(self, path: Path, data: Any) -> None:
        self._writer.put(path, json_text(data))

    def _write_agent_votes(self, agent_id: str) -> None:
        self._write_json(
            self._agent_dir(agent_id) / "votes.json", agent_votes(self._state, agent_id)
        )

    def _write_status(self) -> None:
        """status.json, rendered by the writer when it writes it: the state of then."""
        self._writer.put(self.log_dir / "status.json", self._status_text)

    def _status_text(self) -> str:
        with self._lock:  # the writer's thread: the state must not change under it
            doc = status_document(
                self._state, log_dir=str(self.log_dir), start=self._start, now=self._clock()
            )
            return json_text(doc)

    def _write_summary(self) -> None:
        """vote.json, coordination_events.json and the table: what coordination decided."""
        state = self._state
        self._write_json(self.log_dir / "vote.json", vote_document(state))
        doc = timeline_document(
            self._timeline,
            question=state.question,
            agent_ids=list(state.agents),
            start=self._start,
            end=self._end,
            winner=state.winner,
        )
        self._write_json(self.log_dir / "coordination_events.json", doc)
        table = coordination_table(self._timeline)
        self._writer.put(self.log_dir / "coordination_table.txt", table)

    def _write_final(self) -> None:
        state = self._state
        answer = state.finished.answer if state.finished else "".join(state.final_parts)
        if state.finished or answer:
            self._writer.put(self.log_dir / "final" / "answer.txt", answer)
        self._writer.put(self.log_dir / "final" / "presenter.txt", _presenter_text(state))


def _presenter_text(state: RunState) -> str:
    rows = {
        "winner": state.winner or "none",
        "label": state.winner_label or "none",
        "presenter": state.presenter or "none",
        "strategy": state.strategy or "none",
        "status": state.run_status,
        "reason": state.finish_reason or "none",
    }
    if state.finished is None and state.final_parts:
        rows["answer"] = "partial: the presentation was cut off"
    return "".join(f"{key}: {value}\n" for key, value in rows.items())
