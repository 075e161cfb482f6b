"""The Chat Completions wire: what an OpenAI client sends and what it expects back.

A request's last user message is the question; earlier user/assistant pairs are the
history (`Turn`s), as in a chat session. System messages are not forwarded: each agent
keeps the system message of its team config. Sampling options (`temperature`, ...) are the
team's too, and are ignored; `tools` and `n > 1` are refused, since a team cannot honour
them. The team's progress streams as
`reasoning_content` (one line per thing an agent did), the final answer as `content`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from massgen.coordination.prompts import Turn
from massgen.core import events as ev
from massgen.core.types import Usage

Json = dict[str, Any]
MAX_MESSAGES = 1000
MAX_CONTENT_CHARS = 1_000_000


class RequestError(ValueError):
    """The request is not one we can answer; `status` and `code` go into the error."""

    def __init__(
        self, message: str, *, status: int = 400, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.message, self.status, self.code, self.param = message, status, code, param


def error_body(message: str, kind: str, code: str | None = None, param: str | None = None) -> Json:
    """An OpenAI-shaped error object, as the SDK parses it into an APIError."""
    return {"error": {"message": message, "type": kind, "code": code, "param": param}}


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    question: str
    history: tuple[Turn, ...]
    stream: bool
    include_usage: bool


def parse_request(body: Any) -> ChatRequest:
    """Raises RequestError for anything but a usable chat request."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("`model` must name a team (GET /v1/models lists them)", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("`messages` must be a non-empty list", param="messages")
    if len(messages) > MAX_MESSAGES:
        raise RequestError(f"at most {MAX_MESSAGES} messages", param="messages")
    if body.get("tools") or body.get("functions"):
        raise RequestError("a team answers in text: `tools` are not supported", param="tools")
    if body.get("n") not in (None, 1):
        raise RequestError("a team gives one answer: `n` must be 1", param="n")
    pairs = [(_role(m, i), _text(m, i)) for i, m in enumerate(messages)]
    chat = [(role, text) for role, text in pairs if role in ("user", "assistant")]
    if not chat or chat[-1][0] != "user" or not chat[-1][1].strip():
        raise RequestError("the last message must be a user message with text", param="messages")
    options = body.get("stream_options") or {}
    return ChatRequest(
        model=model,
        question=chat[-1][1],
        history=_history(chat[:-1]),
        stream=bool(body.get("stream")),
        include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
    )


def _role(message: Any, index: int) -> str:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise RequestError(f"messages[{index}] needs a `role`", param=f"messages[{index}]")
    return str(message["role"])


def _text(message: dict[str, Any], index: int) -> str:
    """A message's text: a string, or the text parts of a content list."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, list):
        parts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        content = "\n".join(str(p) for p in parts)
    if not isinstance(content, str):
        raise RequestError(f"messages[{index}].content must be text", param=f"messages[{index}]")
    if len(content) > MAX_CONTENT_CHARS:
        raise RequestError(f"messages[{index}] is too long", param=f"messages[{index}]")
    return content


def _history(chat: list[tuple[str, str]]) -> tuple[Turn, ...]:
    """User/assistant pairs; a user message without a reply joins the next question."""
    turns: list[Turn] = []
    asked: list[str] = []
    for role, text in chat:
        if role == "user":
            asked.append(text)
        elif asked:
            turns.append(Turn("\n\n".join(asked), text))
            asked = []
    return tuple(turns)


# --- responses ---------------------------------------------------------------------------


def usage_body(usage: Usage) -> Json:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def completion(completion_id: str, model: str, answer: str, reasoning: str, usage: Usage) -> Json:
    message: Json = {"role": "assistant", "content": answer}
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": usage_body(usage),
    }


def chunk(completion_id: str, model: str, delta: Json, finish: str | None = None) -> Json:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
    }


def usage_chunk(completion_id: str, model: str, usage: Usage) -> Json:
    return {**chunk(completion_id, model, {}), "choices": [], "usage": usage_body(usage)}


def progress_line(event: ev.AnyEvent) -> str | None:
    """One line for the `reasoning_content` stream: which agent did what (None: nothing)."""
    match event:
        case ev.RunStarted(agents=agents):
            return f"team: {', '.join(agents)}\n"
        case ev.AgentStarted(agent=agent, run=run, vote_only=vote_only):
            doing = "votes" if vote_only else "works"
            return f"[{agent}] {doing} (run {run})\n"
        case ev.ToolCallStarted(agent=agent, name=name):
            return f"[{agent}] calls {name}\n"
        case ev.ToolCallProgress(agent=agent, name=name, message=message):
            return f"[{agent}] … {name}: {message}\n"
        case ev.BroadcastAsked(agent=agent, to=to):
            return f"[{agent}] asks {', '.join(to)}\n"
        case ev.AnswerPublished(agent=agent, label=label):
            return f"[{agent}] answers {label}\n"
        case ev.AnswerChecked(agent=agent, label=label, verdict=verdict, note=note):
            return f"[{agent}] check of {label}: {verdict}{f' ({note})' if note else ''}\n"
        case ev.VoteCast(agent=agent, target=target, target_label=label, reason=reason):
            return f"[{agent}] votes for {target} ({label}): {reason.strip()}\n"
        case ev.AgentRestarted(agent=agent, reason=reason):
            return f"[{agent}] restarts: {reason}\n"
        case ev.AgentFailed(agent=agent, error=error):
            return f"[{agent}] failed: {error}\n"
        case ev.CoordinationFinished(winner=winner, winner_label=label, reason=reason):
            return f"winner: {winner or '-'} ({label or '-'}), {reason}\n"
        case ev.PresentationStarted(agent=agent):
            return f"[{agent}] presents the final answer\n"
        case ev.EvaluationStarted(agent=agent):
            return f"[{agent}] evaluates the final answer\n"
        case ev.OrchestrationRestarted(attempt=attempt, max_attempts=most, reason=reason):
            return f"coordination restarts (attempt {attempt}/{most}): {reason}\n"
    return None
