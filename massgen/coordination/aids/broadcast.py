"""Questions between agents, or to the person, while they work: the `ask_others` tool
(`orchestrator.coordination.broadcast`, the predecessor's keys and tool name).

    ask_others(question, target_agents?, wait?)

`agents`: the question goes to the other agents of the team (or to those named, by their
anonymous labels). Each answers it in one short model call on its own backend, beside its
own run, which goes on undisturbed (the predecessor's "shadow agents"): the answering call
has the agent's own system message, its latest answer and the question, and no tools.
`human`: the question goes to the person at the terminal or on `massgen serve`'s page
(`Person`); where nobody can answer (a headless or API run) the tool says so at once.

`wait` (default `broadcast_wait_by_default`): the call returns the answers. Without it, it
returns at once and the answers reach the asker with its next model call (a restart
before then loses them, as it loses the run's other tool results).

Bounds: `broadcast_timeout` per question (answers in by then come back, the others are
named unanswered); `max_broadcasts_per_agent` questions per agent per turn; QUESTION_CHARS
and ANSWER_CHARS. The answering calls count against the run's budget, as the answering
agent's spending (`phase="broadcast"`).

Effects: asking agents is `External("massgen", "ask_others")`, an action with a cost (the
peers' providers), which the permission engine decides like any such tool; asking the
person is read-only (the person decides by answering). A `deny` rule
`mcp__massgen__ask_others` takes the tool from an agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from massgen.backends.common import estimated_usage, request_chars
from massgen.coordination.aids.base import Aid
from massgen.coordination.replies import TextReply
from massgen.core import events as ev
from massgen.core.effects import Effect, External
from massgen.core.toolbox import Toolboxes, ToolContext, ToolResult
from massgen.core.types import (
    Message,
    Request,
    ToolAnnotations,
    ToolCall,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from massgen.config.schema import CoordinationConfig
    from massgen.coordination.agent import Member
    from massgen.coordination.board import Board
    from massgen.coordination.labels import Labels

TOOL = "ask_others"
SERVER = "massgen"  # `External.server`: a rule names it `mcp__massgen__ask_others`
HUMAN = "human"
QUESTION_CHARS = 4000
ANSWER_CHARS = 4000  # of each answer; a longer one is cut
CONTEXT_CHARS = 4000  # of the answering agent's own latest answer, shown to it
GRACE_SECONDS = 5.0  # the tool call outlives the question's deadline by this much, at most

Emit = Callable[[ev.AnyEvent], None]
Level = Literal["low", "medium", "high"]


@dataclass(frozen=True, slots=True)
class Settings:
    mode: Literal["agents", "human"]
    timeout_seconds: float = 300
    max_per_agent: int = 10
    wait_by_default: bool = True
    sensitivity: Level = "medium"
    depth: Level = "medium"

    @classmethod
    def of(cls, coordination: CoordinationConfig) -> Settings | None:
        """The config's settings; None when broadcast is off."""
        if coordination.broadcast is False:
            return None
        return cls(
            mode=coordination.broadcast,
            timeout_seconds=coordination.broadcast_timeout,
            max_per_agent=coordination.max_broadcasts_per_agent,
            wait_by_default=coordination.broadcast_wait_by_default,
            sensitivity=coordination.broadcast_sensitivity,
            depth=coordination.response_depth,
        )


@runtime_checkable
class Person(Protocol):
    """Someone who answers an agent's question in words (the live view's prompt). None:
    no answer (skipped, or not within `timeout_seconds`)."""

    async def answer_question(
        self, agent: str, question: str, timeout_seconds: float
    ) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Answer:
    responder: str  # an agent id, or HUMAN
    text: str
    ok: bool = True  # False: no answer, and `text` says why


# --- what the models read ---------------------------------------------------------------

SENSITIVITY: dict[str, str] = {
    "low": "Ask only when you are blocked or for a critical decision.",
    "medium": "Ask for significant decisions and design choices, or when a confirmation "
    "would be valuable.",
    "high": "Ask often: whenever you weigh options, propose an approach or decide.",
}

NOTE = (
    "You can ask {whom} questions with the `ask_others` tool. {sensitivity} Put all the "
    "context a useful answer needs into the question: {they} cannot see your work. When an "
    'answer shapes your work, say so in your answer (for example: "I asked which framework '
    'to use; the answer was Vue, so ..."). At most {limit} questions per turn.'
)

ANSWERING = (
    "## Answering a question from your team\n\n"
    "Another agent of your team, {asker}, asks you the question below while you both work "
    "on the same task. Answer it from your own knowledge and work so far: directly, "
    "concretely and briefly, as plain text. You have no tools here, and you cannot see the "
    "asker's work; if the question lacks context, give general guidance and say what would "
    "help. {depth}"
)

DEPTH: dict[str, str] = {
    "low": "Suggest simple, minimal solutions with few dependencies; keep it short.",
    "medium": "Suggest balanced solutions: standard good practice, without over-engineering.",
    "high": "Suggest thorough, sophisticated solutions, with the architecture and tooling a "
    "professional would use, and examples.",
}

NO_HUMAN = (
    "No person is available to answer (this run has no one at a terminal). Decide "
    "yourself, and say in your answer what you assumed."
)


def note(settings: Settings) -> str:
    """The system prompt's paragraph about the tool."""
    human = settings.mode == HUMAN
    return NOTE.format(
        whom="the user" if human else "the other agents of your team",
        they="the user" if human else "they",
        sensitivity=SENSITIVITY[settings.sensitivity],
        limit=settings.max_per_agent,
    )


def tool_spec(settings: Settings) -> ToolSpec:
    human = settings.mode == HUMAN
    whom = "the user (a person)" if human else "the other agents of your team"
    description = (
        f"Ask {whom} a question; the result holds their answers. {SENSITIVITY[settings.sensitivity]}"
        " IMPORTANT: include all relevant context in the question."
    )
    properties: dict[str, Any] = {
        "question": {
            "type": "string",
            "description": (
                f"The question. {'The user' if human else 'They'} cannot see your files or "
                "workspace, so include the requirements, constraints and details a useful "
                "answer needs."
            ),
        },
        "wait": {
            "type": "boolean",
            "description": (
                f"Wait for the answers (default: {str(settings.wait_by_default).lower()}). "
                "false: return at once; the answers come with your next turn."
            ),
        },
    }
    if not human:
        properties["target_agents"] = {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "Optional: the agents to ask, by their anonymous ids as your context shows "
                "them (agent1, agent2, ...); all the others when omitted."
            ),
        }
    schema = {"type": "object", "properties": properties, "required": ["question"]}
    return ToolSpec(
        TOOL,
        description,
        schema,
        ToolAnnotations(read_only=human, destructive=False, open_world=False),
        timeout_seconds=settings.timeout_seconds + GRACE_SECONDS,
    )


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: str | None = None
    # The predecessor's structured form: [{"text": ..., "options": [{"label": ...}]}].
    questions: list[dict[str, Any]] | None = None
    target_agents: list[str] | None = None
    wait: bool | None = None

    def text(self) -> str:
        if self.question and self.question.strip():
            return self.question.strip()
        lines = []
        for number, item in enumerate(self.questions or [], 1):
            options = [str(o.get("label", o.get("id", ""))) for o in item.get("options") or []]
            shown = f" (options: {', '.join(options)})" if options else ""
            lines.append(f"{number}. {item.get('text', '')}{shown}")
        return "\n".join(lines).strip()


# --- the run's channel ------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    """What `begin` hands over: the run's members (budgeted), their names, the board."""

    members: dict[str, Member] = field(default_factory=dict)
    labels: Labels | None = None
    board: Board | None = None
    emit: Emit = lambda event: None


class Broadcasts(Aid):
    """One turn's questions: who asked how many, answers on their way, the person's
    earlier answers. An aid (`aids/base.py`) whose `begin` is called when the run starts;
    `aclose` cancels what is still in flight."""

    name = "broadcast"

    def __init__(self, settings: Settings, person: Person | None = None) -> None:
        self.settings = settings
        self.person = person
        self._run = _Run()
        self._asked: dict[str, int] = {}
        self._inbox: dict[str, list[str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._told_person: list[dict[str, str]] = []  # the person's answers this turn
        self._person_turn = asyncio.Lock()  # one question to the person at a time

    def begin(self, members: Sequence[Member], labels: Labels, board: Board, emit: Emit) -> None:
        self._run = _Run({m.id: m for m in members}, labels, board, emit)

    def inbox(self, agent: str) -> tuple[str, ...]:
        """Answers that arrived for `agent` since it last looked (delivered once)."""
        return tuple(self._inbox.pop(agent, ()))

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def ask(
        self, asker: str, question: str, targets: Sequence[str] | None, wait: bool | None
    ) -> str:
        """The tool's result text. Raises ValueError for what the model got wrong."""
        if not question:
            raise ValueError("`question` is empty; write the question as text")
        if len(question) > QUESTION_CHARS:
            raise ValueError(
                f"the question is {len(question):,} characters; at most {QUESTION_CHARS:,}"
            )
        if self._asked.get(asker, 0) >= self.settings.max_per_agent:
            raise ValueError(
                f"you have asked {self.settings.max_per_agent} questions this turn, the limit; "
                "go on with what you know"
            )
        to = (HUMAN,) if self.settings.mode == HUMAN else self._recipients(asker, targets)
        self._asked[asker] = self._asked.get(asker, 0) + 1
        request_id = uuid.uuid4().hex[:8]
        wait = self.settings.wait_by_default if wait is None else wait
        self._run.emit(
            ev.BroadcastAsked(
                agent=asker, request_id=request_id, question=question, to=to, wait=wait
            )
        )
        earlier = list(self._told_person[-5:])  # what the person said before this question
        work = self._collect(asker, request_id, question, to)
        if wait:
            return self._result(await work, asker, earlier)
        task = asyncio.ensure_future(self._deliver(asker, request_id, work, earlier))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return json.dumps(
            {
                "status": "pending",
                "request_id": request_id,
                "note": "The answers come with your next turn; go on working meanwhile.",
                "questions_left": self._left(asker),
            }
        )

    def _recipients(self, asker: str, targets: Sequence[str] | None) -> tuple[str, ...]:
        labels = self._run.labels
        peers = [agent for agent in self._run.members if agent != asker]
        if labels is None or not peers:
            raise ValueError("there is no other agent to ask")
        if not targets:
            return tuple(peers)
        by_stem = {labels.stem(agent): agent for agent in peers}
        chosen = [by_stem.get(target.strip().split(".")[0]) for target in targets]
        if None in chosen:
            valid = ", ".join(sorted(by_stem))
            raise ValueError(
                f"`target_agents` names agents that are not your peers; valid: {valid}"
            )
        return tuple(dict.fromkeys(agent for agent in chosen if agent is not None))

    async def _collect(
        self, asker: str, request_id: str, question: str, to: tuple[str, ...]
    ) -> list[Answer]:
        deadline = asyncio.get_running_loop().time() + self.settings.timeout_seconds
        started = time.monotonic()

        async def one(responder: str) -> Answer:
            answer = await self._one(asker, responder, question, deadline)
            self._run.emit(
                ev.BroadcastAnswered(
                    agent=asker,
                    request_id=request_id,
                    responder=responder,
                    answer=answer.text,
                    ok=answer.ok,
                    duration_s=round(time.monotonic() - started, 6),
                )
            )
            return answer

        return list(await asyncio.gather(*(one(responder) for responder in to)))

    async def _one(self, asker: str, responder: str, question: str, deadline: float) -> Answer:
        """One responder's answer, or why there is none; never raises but for cancellation."""
        try:
            async with asyncio.timeout_at(deadline):
                if responder == HUMAN:
                    return await self._from_person(asker, question)
                return Answer(responder, await self._from_agent(responder, asker, question))
        except TimeoutError:
            return Answer(responder, f"no answer within {self.settings.timeout_seconds:g}s", False)
        except Exception as error:  # one responder's failure leaves the asker the others
            return Answer(responder, f"no answer ({type(error).__name__}: {error})", False)

    async def _from_person(self, asker: str, question: str) -> Answer:
        if self.person is None:
            return Answer(HUMAN, NO_HUMAN, False)
        async with self._person_turn:
            text = await self.person.answer_question(asker, question, self.settings.timeout_seconds)
        if not text or not text.strip():
            return Answer(HUMAN, "the user did not answer; decide yourself", False)
        text = _cut(text.strip())
        self._told_person.append({"question": question, "answer": text})
        return Answer(HUMAN, text)

    async def _from_agent(self, responder: str, asker: str, question: str) -> str:
        member = self._run.members[responder]
        request = self._answer_request(member, asker, question)
        read = TextReply()
        try:
            await read.read(member.backend.stream(request), ANSWER_CHARS)
        finally:  # also when cut by the deadline: the provider bills what it wrote
            usage = read.usage
            if read.streamed and usage == Usage():
                usage = estimated_usage(request_chars(request), len(read.text))
            if read.streamed:
                self._run.emit(_usage_event(member, usage))
        return _cut(read.text.strip()) or "(an empty answer)"

    def _answer_request(self, member: Member, asker: str, question: str) -> Request:
        labels = self._run.labels
        asker_name = labels.stem(asker) if labels else "a teammate"
        system = ANSWERING.format(asker=asker_name, depth=DEPTH[self.settings.depth])
        if member.system_message:
            system = f"{member.system_message}\n\n---\n\n{system}"
        own = self._run.board.latest().get(member.id) if self._run.board else None
        parts = []
        if own is not None:
            parts.append(f"Your current answer ({own.label}):\n{own.content[:CONTEXT_CHARS]}")
        parts.append(f"Question from {asker_name}:\n{question}")
        messages = (Message("system", system), Message("user", "\n\n".join(parts)))
        return Request(messages, params=member.params)

    def _result(self, answers: list[Answer], asker: str, earlier: list[dict[str, str]]) -> str:
        got = [a for a in answers if a.ok]
        status = "complete" if len(got) == len(answers) else "partial" if got else "no_answers"
        if self.settings.mode == HUMAN and self.person is None:
            status = "no_human"
        body: dict[str, Any] = {
            "status": status,
            "responses": [{"from": self._name(a.responder), "answer": a.text} for a in got],
        }
        missing = [{"from": self._name(a.responder), "why": a.text} for a in answers if not a.ok]
        if missing:
            body["unanswered"] = missing
        if earlier:
            body["earlier_answers_of_the_user"] = earlier
        body["questions_left"] = self._left(asker)
        return json.dumps(body, ensure_ascii=False)

    def _name(self, responder: str) -> str:
        """What the asker reads: never a real agent id."""
        labels = self._run.labels
        if responder == HUMAN or labels is None:
            return responder
        return labels.stem(responder)

    def _left(self, asker: str) -> int:
        return self.settings.max_per_agent - self._asked.get(asker, 0)

    async def _deliver(
        self, asker: str, request_id: str, work: Any, earlier: list[dict[str, str]]
    ) -> None:
        result = self._result(await work, asker, earlier)
        text = f"Answers to your question {request_id} (ask_others):\n{result}"
        self._inbox.setdefault(asker, []).append(text)


def _cut(text: str) -> str:
    if len(text) <= ANSWER_CHARS:
        return text
    return text[:ANSWER_CHARS] + f" [cut: the answer was longer than {ANSWER_CHARS:,} characters]"


def _usage_event(member: Member, usage: Usage) -> ev.UsageReported:
    from massgen.coordination.agent import usage_event

    return usage_event(member, usage, phase="broadcast")


# --- the tool ---------------------------------------------------------------------------


class AskToolbox:
    """`ask_others` for the agents of one team."""

    def __init__(self, channel: Broadcasts) -> None:
        self.channel = channel
        self._specs = (tool_spec(channel.settings),)

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        return (External(SERVER, TOOL, read_only=self.channel.settings.mode == HUMAN),)

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        try:
            arguments = _Arguments.model_validate_json(call.arguments or "{}")
        except ValidationError as error:
            return ToolResult.error(call, f"invalid arguments: {error.errors()[0]['msg']}")
        try:
            text = await self.channel.ask(
                ctx.agent, arguments.text(), arguments.target_agents, arguments.wait
            )
        except ValueError as error:
            return ToolResult.error(call, str(error))
        return ToolResult(call.id, text)


def equip(members: Sequence[Member], channel: Broadcasts) -> list[Member]:
    """Every member with `ask_others` beside its tools, the paragraph about it, and its
    inbox of answers."""
    box = AskToolbox(channel)
    paragraph = note(channel.settings)
    return [
        replace(
            m,
            toolbox=Toolboxes([m.toolbox, box]),
            notes=(*m.notes, paragraph),
            inbox=functools.partial(channel.inbox, m.id),
        )
        for m in members
    ]
