"""What a client asks of the answer beyond the question, read from an OpenAI request.

Chat Completions and Responses name the same wishes differently (`max_tokens` or
`max_completion_tokens` / `max_output_tokens`; `response_format` / `text.format`); both
become one `Ask`, which `serve/shaping.py` applies to the team and `serve/structured.py`
checks the answer against. Nothing a client sends is dropped in silence: an option the
team can honour is honoured, any other is a `RequestError` that names it.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from massgen.core.types import Attachment

MAX_INSTRUCTIONS_CHARS = 100_000
MAX_STOP = 4  # as OpenAI
MAX_IMAGES = 8
MAX_IMAGE_BYTES = 20 * 1024 * 1024
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
# Sampling options every member gets, with their bounds (as OpenAI's).
SAMPLING: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
    "seed": (-(2**63), 2**63 - 1),
}
_DATA_URL = re.compile(r"^data:([\w.+-]+/[\w.+-]+);base64,(.*)$", re.DOTALL)


class RequestError(ValueError):
    """The request is not one we can answer; `status` and `code` go into the error."""

    def __init__(
        self, message: str, *, status: int = 400, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.message, self.status, self.code, self.param = message, status, code, param


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """The final answer must be JSON: valid for `schema`, or any object (`json_object`)."""

    schema: dict[str, Any] | None
    name: str = "answer"
    param: str = "response_format"  # where the client asked for it, for errors
    tool: bool = False  # the answer goes back as a call of the client's tool `name`


@dataclass(frozen=True, slots=True)
class Ask:
    instructions: str = ""  # system/developer messages and `instructions`, in order
    sampling: dict[str, float | int] = field(default_factory=dict)
    max_tokens: int | None = None  # of the final answer
    stop: tuple[str, ...] = ()  # the final answer ends before the first of these
    output: OutputFormat | None = None
    images: tuple[Attachment, ...] = ()


def sampling(body: dict[str, Any], names: tuple[str, ...] = tuple(SAMPLING)) -> dict[str, Any]:
    """The sampling options given (not null), each checked against its bounds."""
    found: dict[str, Any] = {}
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        low, high = SAMPLING[name]
        number_ok = isinstance(value, int) if name == "seed" else isinstance(value, int | float)
        if isinstance(value, bool) or not number_ok or not low <= value <= high:
            kind = "an integer" if name == "seed" else "a number"
            raise RequestError(f"`{name}` must be {kind} from {low:g} to {high:g}", param=name)
        found[name] = value
    return found


def max_tokens(body: dict[str, Any], *names: str) -> int | None:
    """The first of `names` given: a positive integer."""
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RequestError(f"`{name}` must be a positive integer", param=name)
        return value
    return None


def stop(body: dict[str, Any]) -> tuple[str, ...]:
    value = body.get("stop")
    if value is None:
        return ()
    given = [value] if isinstance(value, str) else value
    if (
        not isinstance(given, list)
        or not 0 < len(given) <= MAX_STOP
        or not all(isinstance(s, str) and s for s in given)
    ):
        raise RequestError(f"`stop` must be a string or a list of 1 to {MAX_STOP}", param="stop")
    return tuple(given)


def chat_format(body: dict[str, Any]) -> OutputFormat | None:
    """`response_format`: {"type": "text" | "json_object" | "json_schema", ...}."""
    given = body.get("response_format")
    if given is None:
        return None
    if not isinstance(given, dict):
        raise RequestError("`response_format` must be an object", param="response_format")
    spec = given.get("json_schema") if given.get("type") == "json_schema" else given
    return _format(given.get("type"), spec, "response_format")


def responses_format(body: dict[str, Any]) -> OutputFormat | None:
    """`text.format`: {"type": "text" | "json_object" | "json_schema", "schema", "name"}."""
    text = body.get("text")
    if text is None:
        return None
    given = text.get("format") if isinstance(text, dict) else None
    if given is None:
        return None
    if not isinstance(given, dict):
        raise RequestError("`text.format` must be an object", param="text.format")
    return _format(given.get("type"), given, "text.format")


def _format(kind: Any, spec: Any, param: str) -> OutputFormat | None:
    if kind == "text":
        return None
    if kind == "json_object":
        return OutputFormat(None, param=param)
    if kind != "json_schema":
        raise RequestError(f"`{param}.type` must be text, json_object or json_schema", param=param)
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise RequestError(f"`{param}` of type json_schema needs a `schema` object", param=param)
    from jsonschema import SchemaError, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as error:
        message = f"`{param}` holds an invalid JSON schema: {error.message}"
        raise RequestError(message, param=param) from None
    name = spec.get("name") if isinstance(spec.get("name"), str) else "answer"
    return OutputFormat(schema, name or "answer", param)


TOOLS_REFUSED = (
    "a team calls no client tools: `tools` are served only as structured output, one "
    'function tool that `tool_choice` forces ("required", or naming it), whose arguments '
    "the team's answer becomes (pydantic-ai's default `output_type`); for structured output "
    "otherwise send `response_format` (Responses: `text.format`) with a JSON schema"
)


def forced_tool(body: dict[str, Any], *, nested: bool) -> OutputFormat | None:
    """A request forcing its one function tool asks for that tool's arguments: the answer
    is JSON for the tool's `parameters`, sent back as a call of it. Any other `tools` are
    a RequestError. `nested`: Chat Completions' shape (`{"function": {"name", ...}}`);
    else Responses' (`{"name", ...}`)."""
    tools = body.get("tools")
    if not tools and not body.get("functions"):
        return None
    tool = tools[0] if isinstance(tools, list) and len(tools) == 1 else None
    spec = tool.get("function") if nested and isinstance(tool, dict) else tool
    if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(spec, dict):
        raise RequestError(TOOLS_REFUSED, param="tools")
    name = spec.get("name")
    if not isinstance(name, str) or not name or not _forces(body.get("tool_choice"), name, nested):
        raise RequestError(TOOLS_REFUSED, param="tools")
    parameters = spec.get("parameters") or {"type": "object", "properties": {}}
    checked = _format("json_schema", {"schema": parameters, "name": name}, "tools")
    assert checked is not None
    return OutputFormat(checked.schema, name, "tools", tool=True)


def _forces(choice: Any, name: str, nested: bool) -> bool:
    if choice == "required":
        return True
    if not isinstance(choice, dict) or choice.get("type") != "function":
        return False
    named = choice.get("function") if nested else choice
    return isinstance(named, dict) and named.get("name") == name


def output(given: OutputFormat | None, tool: OutputFormat | None) -> OutputFormat | None:
    """The one form the answer must take. Raises RequestError if asked for both."""
    if given is not None and tool is not None:
        raise RequestError(
            f"ask for the answer's form once: `{given.param}` or a forced tool, not both",
            param="tools",
        )
    return given or tool


def instructions(texts: list[str]) -> str:
    joined = "\n\n".join(t.strip() for t in texts if t.strip())
    if len(joined) > MAX_INSTRUCTIONS_CHARS:
        raise RequestError("the instructions (system messages) are too long", param="messages")
    return joined


def image(url: Any, param: str) -> Attachment:
    """An image given inline as a `data:` URL (the server fetches no URL of a client's)."""
    if not isinstance(url, str):
        raise RequestError("an image needs its `image_url` (a data: URL)", param=param)
    match = _DATA_URL.match(url)
    if match is None:
        raise RequestError(
            "images must be sent inline as data:image/...;base64 URLs: this server does not "
            "fetch image URLs",
            param=param,
        )
    mime = match.group(1).lower()
    if mime not in IMAGE_TYPES:
        raise RequestError(f"images must be one of {', '.join(IMAGE_TYPES)}", param=param)
    try:
        data = base64.b64decode(match.group(2), validate=True)
    except (binascii.Error, ValueError):
        raise RequestError("the image's data: URL is not valid base64", param=param) from None
    if len(data) > MAX_IMAGE_BYTES:
        raise RequestError(f"an image may be at most {MAX_IMAGE_BYTES // 2**20} MB", param=param)
    return Attachment("image", mime, data, "image")
