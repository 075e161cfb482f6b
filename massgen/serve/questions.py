"""Agents' questions to the person on the web page (`coordination.broadcast: human`).

    questions = WebQuestions(on_change=run.wake)       # the run's WebApprover holds one
    text = await questions.answer_question(agent, question, timeout_seconds)   # a `Person`
    questions.answer(question_id, "Use Postgres.")     # POST /api/runs/{run}/questions/{id}

Like a permission ask, an open question is not a core event: it waits here, and the page's
feed sends the open questions (and how the recent ones closed) whenever they change and to
every follower that connects. What was asked and answered is the broadcast's own
`BroadcastAsked`/`BroadcastAnswered` events. Each question has a random id, is answered
once, and closes without an answer (None) when skipped, when its time is up, when the
agent stops waiting, or when the run ends. The answer is plain text of at most
ANSWER_CHARS characters; a longer one is refused with the limit, so nothing is cut unseen.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from massgen.coordination.aids.broadcast import ANSWER_CHARS, QUESTION_CHARS
from massgen.permissions.describe import visible

MAX_OPEN = 8  # questions waiting at once in one run; past that one is unanswered at once
KEEP_CLOSED = 64  # closed questions remembered: the page shows how they ended (409 after)
QUESTION_LINES = 80  # of a question shown on the page
LATE_S = 1.0  # cancelled this close to its deadline: the agent's own timer ran out

Outcome = Literal["answered", "skipped", "expired", "withdrawn", "ended"]
NOTES: dict[str, str] = {
    "answered": "answered",
    "skipped": "skipped: the agent decides itself",
    "expired": "expired: no answer in time, the agent decides itself",
    "withdrawn": "closed: the agent no longer waits for an answer",
    "ended": "closed: the run ended",
}


class UnknownQuestion(LookupError):
    """No question of this run has that id (never had, or forgotten long ago)."""


class QuestionClosed(Exception):
    """The question is answered, skipped, expired or ended; the first outcome stands."""


class AnswerTooLong(ValueError):
    """The answer is over ANSWER_CHARS characters."""


class _Ended(Exception):
    """The run ended while the question was open."""


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    id: str
    agent: str
    text: str
    deadline: float  # wall-clock time at which no answer closes it

    def to_dict(self) -> dict[str, Any]:
        """What the page shows: every line escaped and bounded (the page sets it as text)."""
        lines = self.text[:QUESTION_CHARS].splitlines()[:QUESTION_LINES]
        return {
            "id": self.id,
            "agent": visible(self.agent, 120),
            "question": "\n".join(visible(line, QUESTION_CHARS) for line in lines),
            "deadline": self.deadline,
            "max_chars": ANSWER_CHARS,
        }


@dataclass(frozen=True, slots=True)
class ClosedQuestion:
    id: str
    agent: str
    outcome: Outcome

    def to_dict(self) -> dict[str, Any]:
        note = NOTES[self.outcome]
        return {"id": self.id, "agent": visible(self.agent, 120), "outcome": self.outcome,
                "note": note}  # fmt: skip


class WebQuestions:
    """A `broadcast.Person`: the person on the web page answers in words."""

    def __init__(
        self,
        on_change: Callable[[], None] = lambda: None,
        *,
        timeout_s: float = 300.0,
        max_open: int = MAX_OPEN,
    ) -> None:
        """`timeout_s`: the longest a question waits, whatever the agent allows."""
        self.timeout_s, self.max_open = timeout_s, max_open
        self._on_change = on_change
        self._open: dict[str, tuple[OpenQuestion, asyncio.Future[str | None]]] = {}
        self._closed_ones: OrderedDict[str, ClosedQuestion] = OrderedDict()
        self._closed = False

    def open_questions(self) -> list[OpenQuestion]:
        """The questions waiting for an answer, oldest first."""
        return [question for question, _ in self._open.values()]

    def closed_questions(self) -> list[ClosedQuestion]:
        """How the recent questions ended, oldest first."""
        return list(self._closed_ones.values())

    async def answer_question(
        self, agent: str, question: str, timeout_seconds: float
    ) -> str | None:
        """The person's answer; None when skipped, not answered within `timeout_seconds`
        (and `timeout_s`), when too many are open, or when the run ends."""
        if self._closed or len(self._open) >= self.max_open:
            return None
        wait = max(0.0, min(timeout_seconds, self.timeout_s))
        asked = OpenQuestion(secrets.token_urlsafe(16), agent, question, time.time() + wait)
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._open[asked.id] = (asked, future)
        self._on_change()
        outcome: Outcome = "withdrawn"
        try:
            async with asyncio.timeout(wait):
                text = await future
            outcome = "skipped" if text is None else "answered"
            return text
        except TimeoutError:
            outcome = "expired"
            return None
        except _Ended:
            outcome = "ended"
            return None
        except asyncio.CancelledError:
            # The broadcast's own deadline (the same seconds, counted from the asking)
            # usually fires first; the run's end closes questions before it cancels.
            late = time.time() >= asked.deadline - LATE_S
            outcome = "ended" if self._closed else "expired" if late else "withdrawn"
            raise
        finally:
            if future.done() and not future.cancelled():
                future.exception()  # seen: a run that ends mid-cancel warns of nothing
            del self._open[asked.id]
            self._remember(ClosedQuestion(asked.id, agent, outcome))
            self._on_change()

    def answer(self, question_id: str, text: str | None) -> None:
        """Answer an open question with `text`, or skip it (None). Raises AnswerTooLong,
        UnknownQuestion or QuestionClosed."""
        if text is not None and len(text) > ANSWER_CHARS:
            raise AnswerTooLong(
                f"the answer is {len(text):,} characters; at most {ANSWER_CHARS:,}: shorten it"
            )
        closed = self._closed_ones.get(question_id)
        if closed is not None:
            raise QuestionClosed(f"that question is closed already ({NOTES[closed.outcome]})")
        entry = self._open.get(question_id)
        if entry is None:
            raise UnknownQuestion("no question with that id in this run")
        if entry[1].done():
            raise QuestionClosed("that question was answered already")
        entry[1].set_result(text)

    def close(self) -> None:
        """The run ended: open questions (and any asked later) get no answer."""
        self._closed = True
        for _, future in self._open.values():
            if not future.done():
                future.set_exception(_Ended())

    def _remember(self, closed: ClosedQuestion) -> None:
        self._closed_ones[closed.id] = closed
        while len(self._closed_ones) > KEEP_CLOSED:
            self._closed_ones.popitem(last=False)
