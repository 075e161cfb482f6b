"""The final answer as the client asked for it: JSON for its schema, cut at `stop` and
`max_tokens`.

JSON: the agents were told the form (`shaping.json_rule`); the team's answer is read as
JSON (a code fence around it is taken off) and checked with `jsonschema`. An answer that
fails goes back to the presenter's model, with the validator's message, in one call that
asks the provider for that schema natively (`Request.json_schema`: response formats, a
llama.cpp grammar), at most `MAX_REPAIRS` times; then `NotConforming`.

`max_tokens` counts `CHARS_PER_TOKEN` characters a token (the estimate the backends use
where a provider reports no usage), over the final answer only: the agents' own calls are
not capped, so the usage reported is still the team's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from massgen.backends import registry
from massgen.backends.common import CHARS_PER_TOKEN
from massgen.core.errors import BackendError
from massgen.core.types import Message, Request, TextChunk, Usage
from massgen.runs.loading import LoadedConfig
from massgen.serve.options import Ask, OutputFormat

MAX_REPAIRS = 2
MAX_SHOWN_ERROR = 500  # characters of the validator's message, in a repair prompt or error


class NotConforming(Exception):
    """The team's answer is not valid JSON for the schema, after every repair."""


class Cut:
    """The final answer as sent: ended before the first stop string and after at most
    `max_tokens` tokens. Feed it the text as it streams; `reason` once it ended."""

    def __init__(self, ask: Ask) -> None:
        self.limit = ask.max_tokens * CHARS_PER_TOKEN if ask.max_tokens else None
        self.stops = ask.stop
        # A stop string may arrive split over deltas: hold back its length less one.
        self.keep = max((len(s) for s in self.stops), default=1) - 1
        self.sent, self.held = 0, ""
        self.reason: str | None = None  # "stop" or "length" once ended

    def feed(self, text: str) -> str:
        if self.reason is not None:
            return ""
        self.held += text
        found = [i for i in (self.held.find(s) for s in self.stops) if i >= 0]
        if found:
            out, self.held, self.reason = self.held[: min(found)], "", "stop"
        else:
            split = max(0, len(self.held) - self.keep)
            out, self.held = self.held[:split], self.held[split:]
        return self._bounded(out)

    def end(self) -> str:
        """What is still held back; `reason` is set after."""
        out = self._bounded(self.held) if self.reason is None else ""
        self.held = ""
        self.reason = self.reason or "stop"
        return out

    def _bounded(self, out: str) -> str:
        if self.limit is not None and self.sent + len(out) > self.limit:
            out, self.held, self.reason = out[: self.limit - self.sent], "", "length"
        self.sent += len(out)
        return out


def whole(answer: str, ask: Ask) -> tuple[str, str]:
    """A whole answer cut as asked, and the finish reason ("stop" or "length")."""
    cut = Cut(ask)
    text = cut.feed(answer) + cut.end()
    return text, cut.reason or "stop"


def problem(text: str, output: OutputFormat) -> tuple[str | None, Any]:
    """(None, the value) when `text` is JSON valid for `output`; else (why not, None)."""
    value, error = _parsed(text)
    if error is not None:
        return error, None
    if output.schema is None:
        return (None, value) if isinstance(value, dict) else ("it is not a JSON object", None)
    from jsonschema import validators

    checker = validators.validator_for(output.schema)(output.schema)
    found = next(iter(checker.iter_errors(value)), None)
    if found is None:
        return None, value
    where = "/".join(str(p) for p in found.absolute_path) or "the top level"
    return f"at {where}: {found.message}"[:MAX_SHOWN_ERROR], None


def _parsed(text: str) -> tuple[Any, str | None]:
    body = text.strip()
    if body.startswith("```"):  # a fenced block: the first line names the language
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        return json.loads(body), None
    except ValueError as error:
        return None, f"it is not JSON ({error})"[:MAX_SHOWN_ERROR]


@dataclass(frozen=True, slots=True)
class Conformed:
    text: str  # the JSON, as the client gets it
    usage: Usage  # of the repair calls (none: zero)


async def conform(
    answer: str, output: OutputFormat, loaded: LoadedConfig, presenter: str | None
) -> Conformed:
    """`answer` as JSON valid for `output`, repaired by `presenter`'s model if need be.

    Raises:
        NotConforming: still invalid after `MAX_REPAIRS` repairs (or no model to ask).
    """
    error, value = problem(answer, output)
    spent = Usage()
    agent = _agent(loaded, presenter)
    for _ in range(MAX_REPAIRS if agent is not None else 0):
        if error is None:
            break
        assert agent is not None
        try:
            answer, used = await _repair(agent, loaded, answer, output, error)
        except BackendError as failed:
            raise NotConforming(f"{error}; the repair call failed: {failed}") from None
        spent = spent + used
        error, value = problem(answer, output)
    if error is not None:
        raise NotConforming(error)
    return Conformed(json.dumps(value, ensure_ascii=False), spent)


def _agent(loaded: LoadedConfig, presenter: str | None) -> Any:
    agents = loaded.config.agents
    return next((a for a in agents if a.id == presenter), agents[0] if agents else None)


async def _repair(
    agent: Any, loaded: LoadedConfig, answer: str, output: OutputFormat, error: str
) -> tuple[str, Usage]:
    from massgen.serve.shaping import json_rule

    backend = registry.build(agent.backend, env=loaded.env)
    system = (
        "You rewrite an answer into the JSON it was meant to be, keeping its content. "
        + json_rule(output)
    )
    user = f"The answer:\n\n{answer}\n\nWhy it does not fit: {error}\n\nWrite the JSON now."
    request = Request(
        (Message("system", system), Message("user", user)),
        params=agent.backend.generation_params(),
        json_schema=output.schema or {"type": "object"},
    )
    text, usage = "", Usage()
    try:
        async for item in backend.stream(request):
            if isinstance(item, TextChunk):
                text += item.text
            elif isinstance(item, Usage):
                usage = usage + item
    finally:
        await backend.aclose()
    return text, usage
