"""The documents rendered from a `RunState`: status.json, vote.json, per-agent votes.

Pure functions of the state (plus the clock values passed in), so they are easy to test
and the recorder decides alone when to write them.
"""

from __future__ import annotations

from typing import Any

from massgen.record.state import RunState
from massgen.record.text import iso, preview

REASON_PREVIEW = 120
ANSWER_PREVIEW = 300


def status_document(state: RunState, *, log_dir: str, start: float, now: float) -> dict[str, Any]:
    """Live status: what each agent is doing and what has been decided, as of `now`."""
    return {
        "meta": {
            "question": state.question,
            "log_dir": log_dir,
            "start_time": iso(start),
            "last_updated": iso(now),
            "elapsed_seconds": round(now - start, 3),
        },
        "coordination": _coordination(state),
        "orchestration": _orchestration(state),
        "agents": {agent_id: _agent(state, agent_id) for agent_id in state.agents},
        "results": _results(state),
        "totals": state.totals().to_dict(),
        "status": state.run_status,
        "finish_reason": state.finish_reason,
        "is_complete": state.finished is not None,
    }


def _coordination(state: RunState) -> dict[str, Any]:
    agents = state.agents.values()
    return {
        "phase": state.phase,
        "agents_total": len(state.agents),
        "agents_answered": sum(1 for a in agents if a.answers),
        "agents_voting": sum(1 for a in agents if a.vote is not None),
        "agents_failed": sum(1 for a in agents if a.status == "failed"),
        "presenter": state.presenter,
        "strategy": state.strategy,
    }


def _orchestration(state: RunState) -> dict[str, Any]:
    """Which coordination attempt this is, and why the earlier ones were restarted."""
    verdict = state.verdict
    return {
        "attempt": state.attempt,
        "max_attempts": max(state.max_attempts, state.attempt),
        "restarts": [
            {
                "attempt": r.attempt,
                "by": r.agent,
                "reason": r.reason,
                "instructions": r.instructions,
            }
            for r in state.restarts
        ],
        "evaluation": None
        if verdict is None
        else {"agent": verdict.agent, "submitted": verdict.submitted, "note": verdict.note},
    }


def _agent(state: RunState, agent_id: str) -> dict[str, Any]:
    a = state.agents[agent_id]
    vote = None
    if a.vote is not None:
        vote = {
            "target_label": a.vote.target_label,
            "reason_preview": preview(a.vote.reason, REASON_PREVIEW),
        }
    return {
        "label": a.label,
        "status": a.status,
        "runs": a.runs,
        "answer_count": len(a.answers),
        "latest_answer_label": a.answers[-1].label if a.answers else None,
        "latest_answer_check": _check(state, a.answers[-1].label) if a.answers else None,
        "vote": vote,
        "restarts": a.restarts,
        "rejected_actions": a.rejected_actions,
        "error": a.error,
        "usage": state.spend(agent_id).to_dict(),
    }


def _check(state: RunState, label: str) -> str | None:
    """The verifier's verdict on an answer: "failed (exit 1)"; None: not checked (yet)."""
    check = state.checks.get(label)
    return None if check is None else _check_text(check.verdict, check.note)


def _check_text(verdict: str, note: str) -> str:
    return f"{verdict} ({note})" if note else verdict


def _results(state: RunState) -> dict[str, Any]:
    outcome, finished = state.outcome, state.finished
    return {
        "winner": state.winner,
        "winner_label": state.winner_label,
        "tally": outcome.tally if outcome else state.standing_tally(),
        "final_answer_preview": preview(finished.answer, ANSWER_PREVIEW) if finished else None,
        "checks": {label: _check(state, label) for label in state.checks},
        "final_check": (
            None
            if state.final_check is None
            else _check_text(state.final_check.verdict, state.final_check.note)
        ),
    }


def vote_document(state: RunState) -> dict[str, Any]:
    """The final tally and every vote cast; provisional (`decided: false`) until it is final."""
    outcome = state.outcome
    return {
        "decided": outcome is not None,
        "winner": outcome.winner if outcome else None,
        "winner_label": outcome.winner_label if outcome else None,
        "tally": outcome.tally if outcome else state.standing_tally(),
        "tie_break": outcome.tie_break if outcome else None,
        "agreement": outcome.agreement if outcome else None,
        "reason": outcome.reason if outcome else state.finish_reason,
        "votes": [vote.to_dict() for vote in state.votes],
    }


def agent_votes(state: RunState, agent_id: str) -> list[dict[str, Any]]:
    return [vote.to_dict() for vote in state.votes if vote.voter == agent_id]
