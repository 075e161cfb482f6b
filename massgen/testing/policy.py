"""What the fake servers answer: `Reply` (with its `Fault` and `FakeUsage`) and the
policies that choose one per request (`Scripted`, `cooperative_agent`).

Policies read a request in Chat Completions shape; each fake's wire translates its own
format to that shape first, so one policy drives every provider's fake. Stdlib only.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FakeUsage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Fault:
    """What goes wrong with a reply. `status` set: an HTTP error instead of a stream.
    Otherwise the stream misbehaves at chunk `at_chunk` (0 = before the first event)."""

    status: int | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    drop_after_chunks: int | None = None
    malformed_chunk: bool = False
    stall_seconds: float = 0.0
    at_chunk: int = 0

    @classmethod
    def http(
        cls,
        status: int,
        message: str,
        *,
        code: str | None = None,
        kind: str = "invalid_request_error",
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        return cls(status=status, body=body, headers=dict(headers or {}))

    @classmethod
    def rate_limited(cls, retry_after: float | None = None, message: str = "") -> Fault:
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
        text = message or "Rate limit reached for requests. Please try again later."
        return cls.http(429, text, code="rate_limit_exceeded", kind="requests", headers=headers)

    @classmethod
    def unauthorized(cls, message: str = "Incorrect API key provided.") -> Fault:
        return cls.http(401, message, code="invalid_api_key")

    @classmethod
    def server_error(
        cls, message: str = "The server had an error processing your request."
    ) -> Fault:
        return cls.http(500, message, kind="server_error")

    @classmethod
    def context_length_exceeded(cls, message: str = "") -> Fault:
        text = message or (
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9001 tokens. Please reduce the length of the messages."
        )
        return cls.http(400, text, code="context_length_exceeded")


@dataclass(frozen=True, slots=True)
class FakeSearch:
    """A provider-hosted web search in a reply: its query and the (url, title) pairs it
    found. Each fake streams it in its provider's shapes and cites every source in the
    reply's text."""

    query: str
    sources: Sequence[tuple[str, str]] = ()
    tool: Literal["web_search", "x_search"] = "web_search"


@dataclass(frozen=True, slots=True)
class FakeCode:
    """A provider-hosted run of code in a reply, and what it printed."""

    code: str
    output: str = ""


@dataclass(frozen=True, slots=True)
class FakeFileSearch:
    """A provider-hosted search of uploaded files (`upload_files`) in a reply: its query
    and the file names it finds. The Responses fake finds them only in the vector stores
    the request's `file_search` tool names, and cites every one found in the text."""

    query: str
    files: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Reply:
    """One completion. `tool_calls` are (name, arguments) pairs. `usage="auto"` derives
    counts from the text; None sends no usage. `finish_reason="auto"` is "tool_calls" or
    "stop"; None ends the stream without one."""

    text: str = ""
    reasoning: str = ""
    tool_calls: Sequence[tuple[str, Mapping[str, Any]]] = ()
    usage: FakeUsage | Literal["auto"] | None = "auto"
    fault: Fault | None = None
    finish_reason: str | None = "auto"
    # vLLM/DeepSeek say `reasoning_content`; OpenRouter/Ollama say `reasoning`.
    reasoning_field: str = "reasoning_content"
    # Provider-hosted tool uses, streamed before the text (the fakes that host tools).
    hosted: Sequence[FakeSearch | FakeCode] = ()
    # Searches of uploaded files, streamed after `hosted` (the Responses fake only).
    file_searches: Sequence[FakeFileSearch] = ()


Policy = Callable[[Json], Reply]


# --- policies ---------------------------------------------------------------------------


class Scripted:
    """Replies in order, one per request; a mapping gives each model its own queue."""

    def __init__(self, replies: Iterable[Reply] | Mapping[str, Iterable[Reply]]) -> None:
        self._lock = threading.Lock()
        self._per_model = isinstance(replies, Mapping)
        if isinstance(replies, Mapping):
            self._queues = {model: deque(queue) for model, queue in replies.items()}
        else:
            self._queues = {None: deque(replies)}

    def __call__(self, request: Json) -> Reply:
        key = request.get("model") if self._per_model else None
        with self._lock:
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
        # A 400 is not retried, so a test with too few replies fails at once and says why.
        return Reply(fault=Fault.http(400, f"FakeProvider: script exhausted (model {key!r})"))

    @property
    def remaining(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())


def cooperative_agent(request: Json) -> Reply:
    """A sensible team member: votes when there is something to vote for, else answers;
    plain text when no tools are offered; a JSON object when one is asked for.

    Stateless (safe across threads and servers): the answer's number counts this model's
    earlier answers visible in the prompt.
    """
    model = str(request.get("model") or "fake")
    tools = _offered_tools(request)
    answer = _answer_text(request, model)
    reason = f"{model}: this answer is complete and correct."
    if "vote" in tools and _vote_target(tools["vote"]):
        return Reply(tool_calls=[("vote", _sample(tools["vote"], lambda _: reason, True))])
    if "new_answer" in tools:
        return Reply(tool_calls=[("new_answer", _sample(tools["new_answer"], lambda _: answer))])
    schema = _requested_schema(request)
    if schema is not None:
        texts = lambda name: reason if name == "reason" else answer  # noqa: E731
        return Reply(text=json.dumps(_sample(schema, texts, _has_target(schema))))
    return Reply(text=f"Final answer from {model}. {answer}")


def tool_first(
    name: str,
    arguments: Json,
    answer: Callable[[str], str],
    present: Callable[[Json], Reply] = cooperative_agent,
) -> Policy:
    """A team member that calls tool `name` once before it answers, answers
    `answer(what the tool gave it)`, and votes like `cooperative_agent`; asked with no
    coordination tools (the presentation), it replies `present(request)`."""

    def agent(request: Json) -> Reply:
        offered = set(_offered_tools(request))
        results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        if "vote" in offered:
            return cooperative_agent(request)
        if "new_answer" not in offered:
            return present(request)
        if not results:
            return Reply(tool_calls=[(name, arguments)])
        return Reply(tool_calls=[("new_answer", {"content": answer(results[-1])})])

    return agent


WORKFLOW_ACTIONS = ("new_answer", "vote")
ToolCalls = list[tuple[str, Json]]


def coding_agent(
    calls: Callable[[int], ToolCalls] = lambda turn: [],
    made: list[str] | None = None,
    prefix: str = "",
) -> Policy:
    """A model inside a coding-agent CLI (Claude Code, Codex): in its n-th turn (from 1) it
    makes `calls(n)` one by one, then answers or votes like `cooperative_agent` through
    massgen's actions (named with `prefix` there, as Claude Code's `mcp__massgen__`), and
    stops once it has taken one. Each call of the CLI's own tools it makes is named in
    `made`. One instance serves one member (it counts that member's turns)."""
    turns = 0

    def agent(request: Json) -> Reply:
        nonlocal turns
        history = [
            call["function"]["name"].removeprefix(prefix)
            for message in request["messages"]
            if message["role"] == "assistant"
            for call in message.get("tool_calls") or []
        ]
        if set(history) & set(WORKFLOW_ACTIONS):
            return Reply(text="Done.")
        turns += not history
        todo = calls(turns)
        if len(history) < len(todo):
            if made is not None:
                made.append(todo[len(history)][0])
            return Reply(tool_calls=[todo[len(history)]])
        actions = []
        for tool in request.get("tools") or []:
            name = tool["function"]["name"].removeprefix(prefix)
            if name in WORKFLOW_ACTIONS:
                actions.append({**tool, "function": {**tool["function"], "name": name}})
        reply = cooperative_agent({**request, "tools": actions})
        return Reply(text=reply.text, tool_calls=[(prefix + n, a) for n, a in reply.tool_calls])

    return agent


def _offered_tools(request: Json) -> dict[str, Json]:
    tools: dict[str, Json] = {}
    for tool in request.get("tools") or []:
        function = tool.get("function") or {}
        tools[function.get("name", "")] = function.get("parameters") or {}
    return tools


def _requested_schema(request: Json) -> Json | None:
    fmt = request.get("response_format") or {}
    if fmt.get("type") != "json_schema":
        return None
    return (fmt.get("json_schema") or {}).get("schema") or {}


def _answer_text(request: Json, model: str) -> str:
    tag = f"[{model} answer "
    seen = sum(_content_text(m).count(tag) for m in request.get("messages") or [])
    return f"{tag}{seen + 1}] A careful, complete answer written by {model}."


# --- generic JSON-schema sampling (tool arguments, structured actions) ------------------

_ACTION_WORDS = frozenset({"vote", "new_answer", "stop", "answer"})


def _vote_target(schema: Json) -> bool:
    """Whether the first enum-valued property offers anything to vote for."""
    for prop in (schema.get("properties") or {}).values():
        prop = _resolve(prop, schema)
        if "enum" in prop:
            return bool(prop["enum"])
    return False


def _has_target(schema: Json) -> bool:
    """Whether some enum in the schema lists vote targets (not action names)."""
    return any(values and not set(values) <= _ACTION_WORDS for values in enums(schema))


def enums(node: Any) -> Iterator[list[Any]]:
    """Every `enum` list in a JSON schema, at any depth."""
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            yield node["enum"]
        for value in node.values():
            yield from enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from enums(value)


def _sample(
    schema: Json, text: Callable[[str], str], prefer_vote: bool = False, root: Json | None = None
) -> Any:
    """An instance of `schema`: first enum values, `text(name)` for strings."""
    return _Sampler(root or schema, text, prefer_vote).value(schema, "")


@dataclass(slots=True)
class _Sampler:
    root: Json
    text: Callable[[str], str]
    prefer_vote: bool

    def value(self, schema: Json, name: str) -> Any:
        schema = _resolve(schema, self.root)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.pick(schema["enum"])
        branches = schema.get("oneOf") or schema.get("anyOf")
        if branches:
            return self.value(self.branch(branches), name)
        return self.typed(schema, name)

    def typed(self, schema: Json, name: str) -> Any:
        kind = schema.get("type", "object" if "properties" in schema else "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            props = schema.get("properties") or {}
            keys = schema.get("required") or list(props)
            return {key: self.value(props.get(key, {}), key) for key in keys}
        if kind == "array":
            items = schema.get("items") or {}
            return [self.value(items, name)] if schema.get("minItems") else []
        simple = {"integer": 1, "number": 1, "boolean": True, "null": None}
        return simple[kind] if kind in simple else self.text(name)

    def pick(self, values: list[Any]) -> Any:
        for word in self.order():
            if word in values:
                return word
        # The lowest label, not the first offered: massgen shuffles the options per agent,
        # and a cooperative team should still agree.
        return min(values, key=str) if values else None

    def branch(self, branches: list[Json]) -> Json:
        for word in self.order():
            for branch in branches:
                if word in _literals(_resolve(branch, self.root), self.root):
                    return branch
        return branches[0]

    def order(self) -> tuple[str, ...]:
        return ("vote", "new_answer") if self.prefer_vote else ("new_answer",)


def _literals(schema: Json, root: Json) -> set[Any]:
    found: set[Any] = set()
    for prop in (schema.get("properties") or {}).values():
        prop = _resolve(prop, root)
        if "const" in prop:
            found.add(prop["const"])
        found.update(v for v in prop.get("enum") or [] if isinstance(v, str))
    return found


def _resolve(schema: Any, root: Json) -> Json:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema if isinstance(schema, dict) else {}
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


def prompt_chars(body: Json) -> int:
    """Characters of message content (and tool-call arguments) in one request body."""
    total = 0
    for message in body.get("messages") or []:
        total += len(_content_text(message))
        for call in message.get("tool_calls") or []:
            total += len((call.get("function") or {}).get("arguments") or "")
    return total


def _content_text(message: Json) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""
