"""The Chat Completions wire: what an OpenAI client sends and what it expects back.

A request's last user message is the question; earlier user/assistant pairs are the
history (`Turn`s), as in a chat session. System and developer messages are the user's
instructions, which every agent reads in its system message (`serve/shaping.py`);
images in user messages reach every agent (a team with an agent that cannot read them
refuses the request). Sampling options, `max_tokens`, `stop` and `response_format`
become an `options.Ask`; `tools` and `n > 1` are refused, since a team cannot honour
them. The team's progress streams as `reasoning_content` (one line per thing an agent
did), the final answer as `content`.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from massgen.coordination.prompts import Turn
from massgen.core import events as ev
from massgen.core.types import Attachment, Usage
from massgen.serve import options
from massgen.serve.options import Ask, RequestError

__all__ = ["Ask", "ChatRequest", "RequestError", "error_body", "parse_request"]

Json = dict[str, Any]
MAX_MESSAGES = 1000
MAX_CONTENT_CHARS = 1_000_000
INSTRUCTION_ROLES = ("system", "developer")


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
    ask: Ask = field(default_factory=Ask)


def parse_request(body: Any) -> ChatRequest:
    """Raises RequestError for anything but a usable chat request."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = model_of(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("`messages` must be a non-empty list", param="messages")
    if len(messages) > MAX_MESSAGES:
        raise RequestError(f"at most {MAX_MESSAGES} messages", param="messages")
    if body.get("n") not in (None, 1):
        raise RequestError("a team gives one answer: `n` must be 1", param="n")
    said = [_said(m, i) for i, m in enumerate(messages)]
    question, history, images = conversation([(role, text, imgs) for role, text, imgs in said])
    stream_options = body.get("stream_options") or {}
    ask = Ask(
        instructions=options.instructions([t for r, t, _ in said if r in INSTRUCTION_ROLES]),
        sampling=options.sampling(body),
        max_tokens=options.max_tokens(body, "max_completion_tokens", "max_tokens"),
        stop=options.stop(body),
        output=options.output(options.chat_format(body), options.forced_tool(body, nested=True)),
        images=images,
    )
    return ChatRequest(
        model=model,
        question=question,
        history=history,
        stream=bool(body.get("stream")),
        include_usage=bool(
            isinstance(stream_options, dict) and stream_options.get("include_usage")
        ),
        ask=ask,
    )


def model_of(body: Json) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("`model` must name a team (GET /v1/models lists them)", param="model")
    return model


Said = tuple[str, str, tuple[Attachment, ...]]  # role, text, images


def conversation(said: list[Said]) -> tuple[str, tuple[Turn, ...], tuple[Attachment, ...]]:
    """The question (the last user message), the history before it, and every user
    message's images. Raises RequestError without a final user question in words."""
    chat = [(role, text) for role, text, _ in said if role in ("user", "assistant")]
    images = tuple(image for role, _, imgs in said if role == "user" for image in imgs)
    if len(images) > options.MAX_IMAGES:
        raise RequestError(f"at most {options.MAX_IMAGES} images", param="messages")
    if not chat or chat[-1][0] != "user":
        raise RequestError("the last message must be a user message with text", param="messages")
    if not chat[-1][1].strip():
        last = next(imgs for role, _, imgs in reversed(said) if role == "user")
        message = (
            "the last user message has an image but no text: add a question in words (what "
            "should the team do with the image?)"
            if last
            else "the last message must be a user message with text"
        )
        raise RequestError(message, param="messages")
    return chat[-1][1], _history(chat[:-1]), images


def _said(message: Any, index: int) -> Said:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise RequestError(f"messages[{index}] needs a `role`", param=f"messages[{index}]")
    role = str(message["role"])
    text, images = message_content(message.get("content"), f"messages[{index}]")
    calls = message.get("tool_calls")
    if role == "assistant" and not text and isinstance(calls, list) and calls:
        text = _arguments(calls[0])  # an earlier answer, given as the forced tool's call
    return role, text, images


def _arguments(call: Any) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    return arguments if isinstance(arguments, str) else ""


# Content part types: text, and images (Chat Completions' and Responses' names).
TEXT_PARTS = ("text", "input_text", "output_text")
IMAGE_PARTS = ("image_url", "input_image")


def message_content(content: Any, at: str) -> tuple[str, tuple[Attachment, ...]]:
    """A message's text (a string, or the text parts of a content list) and its images."""
    if content is None:
        return "", ()
    images: list[Attachment] = []
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in TEXT_PARTS:
                texts.append(str(part.get("text", "")))
            elif kind in IMAGE_PARTS:
                url = part.get("image_url")
                url = url.get("url") if isinstance(url, dict) else url
                images.append(options.image(url, f"{at}.content[{i}]"))
            elif kind != "refusal":
                raise RequestError(
                    f"{at}.content[{i}]: a {kind!r} part is not supported (text and images are)",
                    param=at,
                )
        content = "\n".join(texts)
    if not isinstance(content, str):
        raise RequestError(f"{at}.content must be text", param=at)
    if len(content) > MAX_CONTENT_CHARS:
        raise RequestError(f"{at} is too long", param=at)
    return content, tuple(images)


def _history(chat: list[tuple[str, str]]) -> tuple[Turn, ...]:
    """User/assistant pairs; a user message without a reply joins the next question, and
    assistant messages in a row are one reply (a client may replay one answer as its
    reasoning, then its text or tool call). Reasoning a client hands back as a leading
    `<think>...</think>` block is left out: the team reads the answers."""
    turns: list[Turn] = []
    asked: list[str] = []
    for role, text in chat:
        text = _THINK.sub("", text, count=1) if role == "assistant" else text
        if role == "user":
            asked.append(text)
        elif asked:
            turns.append(Turn("\n\n".join(asked), text))
            asked = []
        elif turns and text.strip():
            last = turns[-1]
            joined = f"{last.answer}\n\n{text}" if last.answer.strip() else text
            turns[-1] = Turn(last.question, joined)
    return tuple(turns)


_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


# --- responses ---------------------------------------------------------------------------


def usage_body(usage: Usage) -> Json:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def completion(
    completion_id: str,
    model: str,
    answer: str,
    reasoning: str,
    usage: Usage,
    finish: str = "stop",
    tool: str | None = None,
) -> Json:
    """The whole answer; with `tool`, as a call of the client's tool of that name."""
    message: Json = {"role": "assistant", "content": answer}
    if tool is not None:
        message = {"role": "assistant", "content": None, "tool_calls": [tool_call(tool, answer)]}
        finish = "tool_calls" if finish == "stop" else finish
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage_body(usage),
    }


def tool_call(name: str, arguments: str, index: int | None = None) -> Json:
    """A call of the client's tool `name` (with `index`: as a stream's delta has it)."""
    function = {"name": name, "arguments": arguments}
    call: Json = {"id": f"call_{secrets.token_hex(12)}", "type": "function", "function": function}
    return call if index is None else {"index": index, **call}


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
