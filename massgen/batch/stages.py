"""Where a team loses accuracy, stage by stage, read from each team run's log.

For every team question: each candidate answer (every agent's first answer and every later
one) with what the scorer reads in it and its score, each vote, the selected answer and the
final one. Written to `stages.jsonl` beside `results.jsonl` whenever the summary is, and
rebuilt from the team log directories (`runs/<id>/team/events.jsonl`), so a batch recorded
before this file existed gets it from `massgen batch report`.

The stages, each an accuracy over the same questions:
- each member's first answer inside the team, beside the same member alone (`single`):
  what the team's prompt and action format cost before anyone reads a peer;
- oracle: some candidate was right (the most any selection could reach);
- majority of first answers (by the scorer's extraction): what counting would give for
  no extra call;
- selected: the answer the team chose; final: the answer after presentation;
- the oracle gap: questions where a right candidate existed and the final answer was
  wrong, by id;
- with a `verifier:`, each candidate's `check` (passed, failed, unchecked) and the
  final text's (`final_check`), and how often a candidate that passed its check was right.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from massgen.batch import store
from massgen.batch.scoring import Scorer, wilson
from massgen.batch.work import SINGLE, TEAM, run_dir

STAGES = "stages.jsonl"
Record = dict[str, Any]

_KINDS = {"answer_published", "answer_checked", "vote_cast", "coordination_finished"}


@dataclass(slots=True)
class _Read:
    """What one team run's events said, in the order they came."""

    candidates: list[Record] = field(default_factory=list)
    votes: list[Record] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)  # agents with a first answer
    selected_label: Any = None
    agreement: Any = None
    reason: Any = None
    final_check: Any = None


def record(
    task_id: str,
    events: Iterable[Mapping[str, Any]],
    reference: str | None,
    scorer: Scorer,
    final_score: float | None,
) -> Record:
    """One question's stages from its team run's events."""
    read = _read(events, reference, scorer)
    candidates, reason = read.candidates, read.reason
    selected = _latest(candidates, read.selected_label)
    return {
        "id": task_id,
        "candidates": candidates,
        "votes": read.votes,
        "selected": read.selected_label,
        "selected_score": selected["score"] if selected else None,
        "final_score": final_score,
        "majority_first": _majority([c for c in candidates if c["first"]]),
        "oracle": any((c["score"] or 0) >= 1 for c in candidates),
        "agreement": read.agreement,
        "ended_by_agreement": bool(reason and str(reason).startswith("agreement")),
        "ended_by_rank": bool(reason and str(reason).startswith("ranked")),
        "final_check": read.final_check,
    }


def _read(events: Iterable[Mapping[str, Any]], reference: str | None, scorer: Scorer) -> _Read:
    read = _Read()
    for event in events:
        kind = event.get("type")
        if kind == "answer_published":
            read.candidates.append(_candidate(event, read.answered, reference, scorer))
        elif kind == "answer_checked" and event.get("phase") == "presentation":
            read.final_check = event.get("verdict")
        elif kind == "answer_checked":
            checked = _latest(read.candidates, event.get("label"))
            if checked is not None:
                checked["check"] = event.get("verdict")
        elif kind == "vote_cast":
            read.votes.append({"voter": event.get("agent"), "label": event.get("target_label")})
        elif kind == "coordination_finished":
            read.selected_label = event.get("winner_label")
            read.agreement, read.reason = event.get("agreement"), event.get("reason")
    return read


def _candidate(
    event: Mapping[str, Any], answered: set[str], reference: str | None, scorer: Scorer
) -> Record:
    """A published answer, scored; `first` unless its agent is in `answered` (it is added)."""
    agent, content = str(event["agent"]), str(event.get("content") or "")
    first = agent not in answered
    answered.add(agent)
    return {
        "agent": agent,
        "label": event.get("label"),
        "first": first,
        "value": scorer.extract(content),
        "score": scorer.score(content, reference),
    }


def _latest(candidates: Sequence[Record], label: Any) -> Record | None:
    """The candidate published under `label` (the latest, were there several)."""
    return next((c for c in reversed(candidates) if c["label"] == label), None)


def _majority(firsts: Sequence[Record]) -> Record | None:
    """The most common value among first answers (ties: the one published first), and its
    score; None when no first answer has a value."""
    counts = Counter(c["value"] for c in firsts if c["value"] is not None)
    if not counts:
        return None
    top = max(counts.values())
    winner = next(c for c in firsts if c["value"] is not None and counts[c["value"]] == top)
    return {"value": winner["value"], "votes": top, "score": winner["score"]}


def build(
    out: Path,
    rows: Mapping[tuple[str, str], store.Row],
    ids: Sequence[str],
    references: Mapping[str, str | None],
    scorer: Scorer,
) -> list[Record]:
    """A record per finished team question whose log is on disk, in `ids` order."""
    records = []
    for tid in ids:
        row = rows.get((tid, TEAM))
        path = run_dir(out, tid) / "team" / "events.jsonl"
        if row is None or row.get("status") not in store.FINISHED or not path.exists():
            continue
        records.append(record(tid, _events(path), references.get(tid), scorer, row.get("score")))
    return records


def _events(path: Path) -> list[dict[str, Any]]:
    found = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill
            if isinstance(event, dict) and event.get("type") in _KINDS:
                found.append(event)
    return found


def write(out: Path, records: Sequence[Record]) -> Path:
    """`stages.jsonl`, replaced whole (it is derived: the logs are the source)."""
    from massgen.record.atomic import write_text

    path = out / STAGES
    write_text(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return path


# --- the stage table -------------------------------------------------------------------------


def summarise(records: Sequence[Record], rows: Mapping[tuple[str, str], store.Row]) -> dict:
    """Accuracy with its interval at each stage, over the questions with a record."""
    ids = [r["id"] for r in records]
    agents = sorted({c["agent"] for r in records for c in r["candidates"]})
    members = []
    for agent in agents:
        firsts = [_first_score(r, agent) for r in records]
        single = [_score(rows.get((tid, SINGLE + agent))) for tid in ids]
        members.append({"agent": agent, "first_answer": _rate(firsts), "single": _rate(single)})
    gap = [r["id"] for r in records if r["oracle"] and (r["final_score"] or 0) < 1]
    ended = [r for r in records if r["ended_by_agreement"]]
    return {
        "n": len(records),
        "members": members,
        "oracle": _rate([1.0 if r["oracle"] else 0.0 for r in records]),
        "majority_first": _rate([(r["majority_first"] or {}).get("score") for r in records]),
        "selected": _rate([r["selected_score"] for r in records]),
        "final": _rate([r["final_score"] for r in records]),
        "oracle_gap": {
            "count": len(gap),
            "share": len(gap) / len(records) if records else None,
            "ids": gap,
        },
        "agreement": _agreement_tokens(ended, records, rows),
        # With a verifier: of the candidates that passed their check, how many were right.
        "checked_passed": _rate(
            [c["score"] for r in records for c in r["candidates"] if c.get("check") == "passed"]
        ),
    }


def _first_score(r: Record, agent: str) -> float | None:
    first = next((c for c in r["candidates"] if c["agent"] == agent and c["first"]), None)
    return first["score"] if first else None


def _score(row: store.Row | None) -> float | None:
    if row is None or row.get("status") not in store.FINISHED:
        return None
    return row.get("score")


def _rate(scores: Sequence[float | None]) -> dict[str, Any]:
    """Accuracy over the scored values (None: not scored), with the 95% interval."""
    scored = [float(s) for s in scores if s is not None]
    if not scored:
        return {"n": 0, "accuracy": None, "interval": [None, None]}
    low, high = wilson(sum(scored), len(scored))
    return {"n": len(scored), "accuracy": sum(scored) / len(scored), "interval": [low, high]}


def _agreement_tokens(
    ended: Sequence[Record], records: Sequence[Record], rows: Mapping[tuple[str, str], store.Row]
) -> dict[str, Any]:
    """Questions that agreement ended, those a ranking settled (`when_split: rank`), and
    the team's tokens per question on each and on the rest: what a vote round cost where
    one was held."""

    def mean(group: Sequence[Record]) -> float | None:
        tokens = [int((rows.get((r["id"], TEAM)) or {}).get("tokens") or 0) for r in group]
        return sum(tokens) / len(tokens) if tokens else None

    ranked = [r for r in records if r.get("ended_by_rank")]
    voted = [r for r in records if not r["ended_by_agreement"] and not r.get("ended_by_rank")]
    return {
        "ended_runs": len(ended),
        "ranked_runs": len(ranked),
        "tokens_per_question_agreed": mean(ended),
        "tokens_per_question_ranked": mean(ranked),
        "tokens_per_question_voted": mean(voted),
    }
