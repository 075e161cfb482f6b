"""The web page's approver: an ask waits, in the run's live feed, until a person answers.

    approver = WebApprover(on_change=run.wake)      # one per run started from the page
    TeamRun(loaded, question, approver=approver)
    approver.answer(ask_id, Choice.ONCE)            # POST /api/runs/{run}/asks/{ask_id}

An open ask is not a core event: it lives here while it waits, and the page's feed sends
the list of open asks whenever it changes and again to every follower that connects, so a
page reloaded mid-ask shows it again. The decision itself is the engine's
`PermissionDecided` event and ledger line, like any other. Each ask has a random id (the
page cannot guess another run's), is answered once (a second answer is refused), and
raises when no answer comes in time or the run ends, which the engine records as a deny.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from massgen.permissions.approval import ApprovalRequest, Choice, Operator
from massgen.permissions.describe import effects_text, visible
from massgen.serve.questions import WebQuestions

ANSWER_SECONDS = 300.0  # as long as the terminal's prompt waits
MAX_OPEN = 64  # asks waiting at once in one run; past that an ask is a deny at once
KEEP_ANSWERED = 256  # answered ids remembered, so a second answer is told apart (409)
CHOICES = (  # (choice, button text, what it means)
    (Choice.ONCE, "allow once", "allow this call only"),
    (Choice.SESSION, "allow for this run", "allow the same effect for the rest of this run"),
    (
        Choice.ALWAYS,
        "always allow",
        "allow, and save an allow rule in .massgen/settings.local.json",
    ),
    (Choice.DENY, "deny", "refuse this call"),
)


class NotAnswered(Exception):
    """No answer came: the time ran out, the run ended, or too many asks were open."""


class UnknownAsk(LookupError):
    """No open ask has that id (never had, timed out, or its run ended)."""


class AlreadyAnswered(Exception):
    """The ask was answered already; the first answer stands."""


@dataclass(frozen=True, slots=True)
class OpenAsk:
    id: str
    request: ApprovalRequest
    deadline: float  # wall-clock time at which no answer becomes a deny

    def to_dict(self) -> dict[str, Any]:
        """What the page shows, every model-chosen text escaped and bounded."""
        request = self.request
        return {
            "id": self.id,
            "agent": visible(request.agent, 120),
            "tool": visible(request.tool, 120),
            "effects": effects_text(request),
            "details": [visible(d) for d in request.details[:8]],
            "risk": request.risk,
            "reason": visible(request.reason),
            "phase": request.phase,
            "arguments": visible(request.arguments),
            "deadline": self.deadline,
            "choices": [{"value": c.value, "text": t, "hint": h} for c, t, h in CHOICES],
        }


class WebApprover:
    """Answers the engine's asks with the choice a person makes on the web page, and
    (a `broadcast.Person`) the agents' questions with the words the person writes there."""

    operator: Operator = "human"

    def __init__(
        self,
        on_change: Callable[[], None] = lambda: None,
        *,
        timeout_s: float = ANSWER_SECONDS,
        max_open: int = MAX_OPEN,
    ) -> None:
        """`on_change`: called whenever an ask opens or closes (the run's feed wakes)."""
        self.timeout_s, self.max_open = timeout_s, max_open
        self._on_change = on_change
        self._open: dict[str, tuple[OpenAsk, asyncio.Future[Choice]]] = {}
        self._answered: OrderedDict[str, Choice] = OrderedDict()
        self._closed = False
        self.questions = WebQuestions(on_change, timeout_s=timeout_s)

    async def answer_question(
        self, agent: str, question: str, timeout_seconds: float
    ) -> str | None:
        """An agent's `ask_others` question, open on the page until answered (`questions`)."""
        return await self.questions.answer_question(agent, question, timeout_seconds)

    def open_asks(self) -> list[OpenAsk]:
        """The asks waiting for an answer, oldest first."""
        return [ask for ask, _ in self._open.values()]

    async def ask(self, request: ApprovalRequest) -> Choice:
        """The person's choice. Raises NotAnswered on timeout, at the run's end, or when
        too many asks are open (the engine makes each a deny)."""
        if self._closed:
            raise NotAnswered("the run has ended")
        if len(self._open) >= self.max_open:
            raise NotAnswered(f"{self.max_open} asks are already waiting for an answer")
        ask = OpenAsk(secrets.token_urlsafe(16), request, time.time() + self.timeout_s)
        future: asyncio.Future[Choice] = asyncio.get_running_loop().create_future()
        self._open[ask.id] = (ask, future)
        self._on_change()
        try:
            async with asyncio.timeout(self.timeout_s):
                return await future
        except TimeoutError:
            raise NotAnswered(f"no answer from the web page within {self.timeout_s:g} s") from None
        finally:
            del self._open[ask.id]
            self._on_change()

    def answer(self, ask_id: str, choice: Choice) -> None:
        """Answer an open ask. Raises UnknownAsk or AlreadyAnswered."""
        if ask_id in self._answered:
            raise AlreadyAnswered(f"that ask was answered already ({self._answered[ask_id]})")
        entry = self._open.get(ask_id)
        if entry is None or entry[1].done():
            raise UnknownAsk("no open ask with that id (it may have timed out)")
        entry[1].set_result(choice)
        self._answered[ask_id] = choice
        while len(self._answered) > KEEP_ANSWERED:
            self._answered.popitem(last=False)

    def close(self) -> None:
        """The run ended: asks and questions still open (and any asked later) are not
        answered."""
        self._closed = True
        self.questions.close()
        for _, future in self._open.values():
            if not future.done():
                future.set_exception(NotAnswered("the run ended before an answer"))
