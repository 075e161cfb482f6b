"""One bounded model call before coordination (personas, evaluation criteria).

No tools, no hosted tools, one user message; the reply is read as text until it ends, or
until it passes `max_chars` or `timeout_seconds` (then `GenerationFailed`). Its usage is
reported like any call's, in phase "preparation", so budgets and costs count it.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from massgen.backends.common import estimated_usage, request_chars
from massgen.coordination.agent import Emit, Member, usage_event
from massgen.coordination.replies import TextReply
from massgen.core.types import Message, Request, Usage

PHASE = "preparation"


class GenerationFailed(Exception):
    """The generation call gave nothing usable; the message says why."""


@dataclass(frozen=True, slots=True)
class Bounds:
    timeout_seconds: float
    max_chars: int


async def ask(member: Member, prompt: str, bounds: Bounds, emit: Emit) -> str:
    """The reply's text. Raises GenerationFailed (too long, too slow) or what the backend
    raises."""
    request = Request((Message("user", prompt),), (), member.params)
    reply = TextReply()
    try:
        async with asyncio.timeout(bounds.timeout_seconds):
            await reply.read(member.backend.stream(request), bounds.max_chars)
            if reply.overflowed:
                raise GenerationFailed(f"the reply passed {bounds.max_chars} characters")
    except TimeoutError:
        raise GenerationFailed(f"no reply within {bounds.timeout_seconds:g}s") from None
    finally:
        usage = reply.usage
        if usage == Usage() and reply.text:  # cut short: providers bill what they wrote
            usage = estimated_usage(request_chars(request), len(reply.text))
        if usage != Usage():
            emit(usage_event(member, usage, phase=PHASE))
    return reply.text


def json_object(text: str, key: str) -> dict[str, Any]:
    """The JSON object holding `key` in a model's reply: the whole reply, a fenced block,
    or the first `{` ... last `}` span. Raises GenerationFailed."""
    candidates = [text.strip()]
    candidates += re.findall(r"```(?:json)?\s*(.*?)```", text, flags=re.DOTALL)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and key in data:
            return data
    raise GenerationFailed(f"the reply holds no JSON object with `{key}`")


def text_entry(entry: object, key: str) -> tuple[dict[str, Any], str] | None:
    """One entry of a generated list: an object whose `key` is a non-empty text (a bare
    string is taken as that text). The object and its text, stripped; None otherwise."""
    if isinstance(entry, str):
        entry = {key: entry}
    if not isinstance(entry, dict):
        return None
    text = entry.get(key)
    if not isinstance(text, str) or not text.strip():
        return None
    return entry, text.strip()
