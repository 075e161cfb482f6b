"""Value types that cross the backend seam.

A backend receives a `Request` and yields `BackendEvent`s. Nothing above the backend layer
ever sees a provider payload: every backend normalises into these types at its boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
# A tool the provider runs on its own servers, switched on by a config key
# (`enable_web_search`, ...); it never passes through our toolboxes.
# `file_search` is switched on per run, once the files it searches are uploaded
# (`runs/uploads.py`).
HostedTool = Literal["web_search", "code_execution", "x_search", "file_search"]


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """What a tool says of itself (MCP's annotations). Hints for the permission engine, to
    be believed only from a source the user trusts; None is "not said"."""

    read_only: bool | None = None
    destructive: bool | None = None
    open_world: bool | None = None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call: name, description and a JSON schema for arguments.
    Backends send the first three; `annotations` stay on our side."""

    name: str
    description: str
    parameters: dict[str, Any]
    annotations: ToolAnnotations = ToolAnnotations()
    # This tool's own wall-clock bound, replacing the per-call timeout (a subagent call
    # waits for its children, `ask_others` for `broadcast_timeout`); None: the run's
    # `tool_timeout_seconds`.
    timeout_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model made. `arguments` is the raw JSON text as the model wrote it."""

    id: str
    name: str
    arguments: str


# Media a model reads as input (`upload_files` image/audio/video entries).
MediaKind = Literal["image", "audio", "video"]


@dataclass(frozen=True, slots=True)
class Attachment:
    """A media file sent inside a user message: its kind, MIME type and bytes. Each wire
    sends it as its provider's own content part (`backends/media.py`)."""

    kind: MediaKind
    mime_type: str
    data: bytes = field(repr=False)
    name: str = ""


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    # Media on a user message, after its text; other roles carry none.
    attachments: tuple[Attachment, ...] = ()


ReasoningEffort = Literal["minimal", "low", "medium", "high", "xhigh"]
ReasoningSummary = Literal["auto", "concise", "detailed"]
Verbosity = Literal["low", "medium", "high"]


def _bounded(**bounds: float) -> Any:
    """A parameter left to the provider by default, with the bounds a config may give it
    (`ge`, `le`: pydantic's names, which the config's field takes as they are)."""
    return field(default=None, metadata=bounds)


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Typed generation parameters. `None` means "let the provider decide".

    The one declaration of them: the config's fields (`BackendConfig`) are derived from
    these, with the bounds in each field's metadata, and each wire names the ones it sends
    and where (`backends/wires.py`). They reach a backend only in the `Request`, never
    through its constructor.
    """

    temperature: float | None = _bounded(ge=0, le=2)
    top_p: float | None = _bounded(ge=0, le=1)
    max_tokens: int | None = _bounded(ge=1)
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    presence_penalty: float | None = _bounded(ge=-2, le=2)
    frequency_penalty: float | None = _bounded(ge=-2, le=2)
    reasoning_effort: ReasoningEffort | None = None
    # OpenAI Responses: stream a summary of the model's reasoning.
    reasoning_summary: ReasoningSummary | None = None
    # Anthropic, Gemini: thinking tokens (Anthropic adds them to max_tokens).
    thinking_budget: int | None = _bounded(ge=1024)
    # OpenAI Responses `text.verbosity`: how long the answer should be.
    verbosity: Verbosity | None = None
    # Provider fields we have no type for, merged into the request body as they are.
    extra_body: dict[str, Any] | None = None


# Every typed parameter except the untyped `extra_body`, which each wire handles itself.
TYPED_PARAMS: tuple[str, ...] = tuple(
    name for name in GenerationParams.__dataclass_fields__ if name != "extra_body"
)


@dataclass(frozen=True, slots=True)
class Request:
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    params: GenerationParams = field(default_factory=GenerationParams)
    # Ask for a JSON object matching this schema instead of (or besides) tools; used by
    # models without function calling.
    json_schema: dict[str, Any] | None = None
    # Provider-hosted tools to switch on for this call (the wire must offer them).
    hosted: tuple[HostedTool, ...] = ()
    # The provider-side stores `file_search` searches (OpenAI vector store ids).
    file_stores: tuple[str, ...] = ()


# --- what a backend yields -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextChunk:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningChunk:
    text: str


@dataclass(frozen=True, slots=True)
class FileChanges:
    """What an answer changed in its agent's workspace (`workspace/changes.py`)."""

    files: tuple[str, ...]  # "+ path" added, "~ path" changed, "- path" removed
    diff: str  # unified, bounded


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    # True when the provider sent no usage and the numbers are estimated from text length.
    estimated: bool = False
    # What the provider itself says these tokens cost (Claude Code's result message); None:
    # priced from massgen's table.
    billed_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.estimated or other.estimated,
            _billed(self, other),
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def _billed(one: Usage, other: Usage) -> float | None:
    """The bill of both, known only when each side that used tokens has one."""
    sides = [u for u in (one, other) if u.total_tokens or u.billed_usd is not None]
    if not sides or any(u.billed_usd is None for u in sides):
        return None
    return sum(u.billed_usd or 0.0 for u in sides)


@dataclass(frozen=True, slots=True)
class Source:
    """A page a hosted search read or an answer cites."""

    url: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class HostedActivity:
    """One use of a provider-hosted tool during a call, as the provider reported it: a
    search (its query and the sources it found) or a run of code (the code, its output).
    Reported when complete; the provider ran it, so there is nothing for us to answer."""

    id: str
    tool: HostedTool
    query: str = ""
    sources: tuple[Source, ...] = ()
    code: str = ""
    output: str = ""
    ok: bool = True


@dataclass(frozen=True, slots=True)
class Finish:
    reason: str = "stop"


BackendEvent = TextChunk | ReasoningChunk | ToolCall | HostedActivity | Usage | Finish
