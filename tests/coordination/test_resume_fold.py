"""What a journal folds into for a resume, and the board it rebuilds: by the board's own
rules, so votes retired the first time are retired again."""

from __future__ import annotations

import pytest

from massgen.coordination.labels import Labels
from massgen.coordination.resume import ResumeError, from_journal, rebuild
from massgen.core import events as ev
from massgen.core.outcome import Outcome
from massgen.core.status import Status

IDS = ("a", "b", "c")
SEED = 42
L = Labels(list(IDS), SEED)


def started(attempt: int = 1) -> ev.RunStarted:
    return ev.RunStarted(question="q", agents=IDS, labels=L.as_dict(), seed=SEED, attempt=attempt)


def run(agent: str, n: int) -> ev.AgentStarted:
    return ev.AgentStarted(agent=agent, run=n, answers_in_view=())


def answer(agent: str, version: int = 1) -> ev.AnswerPublished:
    return ev.AnswerPublished(
        agent=agent, label=L.label(agent, version), content=f"{agent}{version}"
    )


def vote(agent: str, target: str, version: int = 1) -> ev.VoteCast:
    return ev.VoteCast(
        agent=agent,
        voter_label=L.stem(agent),
        target=target,
        target_label=L.label(target, version),
        reason="good",
    )


def journal() -> list[ev.AnyEvent]:
    """a and b answer; c votes for a; b answers again (c's vote is retired); a fails;
    c is mid-run when the process dies."""
    return [
        started(),
        run("a", 1), run("b", 1), run("c", 1),
        answer("a"), answer("b"),
        ev.AgentRestarted(agent="c", reason="newer answers"),
        run("c", 2), vote("c", "a"),
        run("b", 2), answer("b", 2),
        ev.VoteInvalidated(agent="c", target_label=L.label("a", 1), newer_label=L.label("b", 2)),
        ev.AgentFailed(agent="a", error="auth"),
        run("c", 3),
    ]  # fmt: skip


def test_the_fold_keeps_answers_failures_and_finished_runs():
    resumed = from_journal(journal())
    assert resumed.seed == SEED and resumed.attempts == 1
    assert resumed.answer_labels == [L.label("a", 1), L.label("b", 1), L.label("b", 2)]
    assert resumed.failed == {"a": "auth"}
    assert resumed.runs == {"a": 1, "b": 2, "c": 2}  # c's run 3 was in flight: redone
    assert resumed.summary() == "resumed: 3 answers, 0 votes, 1 failed (attempt 2)"


def test_the_rebuilt_board_retires_what_a_newer_answer_retired():
    board = rebuild(from_journal(journal()))
    assert board.versions() == {"a": 1, "b": 2, "c": 0}
    assert board.standing_votes() == []
    standing = from_journal([*journal()[:9]])  # before b's second answer
    (kept,) = rebuild(standing).standing_votes()
    assert (kept.voter, kept.target_label) == ("c", L.label("a", 1))


def test_an_interrupted_attempt_and_its_fallback_ending_are_continued():
    events = [
        *journal(),
        ev.CoordinationFinished(winner="b", winner_label=L.label("b", 2), tally={}, reason="x"),
        ev.RunFinished(outcome=Outcome(answer="b2", status=Status.INTERRUPTED, reason="x",
                                       winner="b", winner_label=L.label("b", 2))),
        started(attempt=2),
        run("c", 3),
    ]  # fmt: skip
    resumed = from_journal(events)
    assert resumed.attempts == 2 and resumed.runs["c"] == 2


def test_a_finished_run_or_an_empty_journal_is_not_resumed():
    done = ev.RunFinished(outcome=Outcome(answer="x", status=Status.OK, reason="r"))
    with pytest.raises(ResumeError, match="already finished"):
        from_journal([*journal(), done])
    with pytest.raises(ResumeError, match="no run"):
        from_journal([])


def test_a_journal_of_another_seed_does_not_rebuild():
    events = [started(), ev.AnswerPublished(agent="a", label="agent9.1", content="x")]
    with pytest.raises(ResumeError, match="does not match"):
        rebuild(from_journal(events))
