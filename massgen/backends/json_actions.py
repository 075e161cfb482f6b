"""Holding a model without function calling to the workflow-action schema.

A JSON grammar makes the reply valid JSON; a note in words tells a small model what to
put in it; and a reply cut off by `max_tokens` is closed so it still parses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from massgen.core.types import Message

# A vote's reason is a sentence or two. A small model left to itself can fill max_tokens
# with it (minutes on a CPU, and a wall of text on screen); the grammar ends it instead.
REASON_MAX_CHARS = 300


def grammar(schema: dict[str, Any]) -> Any:
    """A llama.cpp grammar for `schema` (imports llama_cpp: call it in the worker)."""
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(shaped_schema(schema)))
    # llama-cpp-python's string characters include raw control characters (a newline),
    # which JSON forbids inside strings; a small model writes them, so shut them out.
    gbnf = gbnf.replace(_LOOSE_CHAR, _JSON_CHAR)
    return LlamaGrammar.from_string(gbnf, verbose=False)


def shaped_schema(schema: Any) -> Any:
    """`schema` as the grammar should hold a small model to it: every string property named
    `reason` capped at REASON_MAX_CHARS."""
    if isinstance(schema, list):
        return [shaped_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: shaped_schema(value) for key, value in schema.items()}
    reason = (out.get("properties") or {}).get("reason")
    if isinstance(reason, dict) and reason.get("type") == "string":
        out["properties"] = {
            **out["properties"],
            "reason": {**reason, "maxLength": REASON_MAX_CHARS},
        }
    return out


_LOOSE_CHAR = r'char ::= [^"\\]'
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F]'


# --- prompts -----------------------------------------------------------------------------


def chat_messages(messages: tuple[Message, ...], schema: dict[str, Any] | None) -> list[dict]:
    out: list[dict[str, str]] = []
    for message in messages:
        if message.role == "tool":
            out.append({"role": "user", "content": f"Tool result: {message.content}"})
        else:
            out.append({"role": message.role, "content": message.content})
    if schema is not None:
        # The grammar makes the reply valid JSON; saying so in words helps a small model
        # fill it sensibly instead of fighting the grammar.
        note = json_reply_note(schema)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{note}"}
        else:
            out.insert(0, {"role": "system", "content": note})
    return out


def json_reply_note(schema: dict[str, Any]) -> str:
    """How to reply, in words, for a model constrained to `schema`."""
    shapes = [_shape(option) for option in schema.get("anyOf") or [schema]]
    if len(shapes) == 1:
        return f"Reply with one JSON object: {shapes[0]}"
    return "Reply with one JSON object, one of:\n" + "\n".join(shapes)


# Placeholders for free-text fields without a `description`. A small model copies a quoted
# "..." or "<content>" literally; an unquoted phrase saying what goes there works better.
_PLACEHOLDERS = {
    "content": "your answer to the ORIGINAL MESSAGE",
    "reason": "why it is the best answer, in one sentence",
}


def _shape(schema: Mapping[str, Any]) -> str:
    """`{"action": "vote", "agent_id": "agent1.1" | "agent2.1", "reason": <why ...>}`, or
    `{"action": "tool", "name": "lookup", "arguments": {"city": <city>}}`"""
    fields = []
    for name, prop in (schema.get("properties") or {}).items():
        if "const" in prop:
            value = json.dumps(prop["const"])
        elif prop.get("type") == "object" and "properties" in prop:
            value = _shape(prop)  # a tool's arguments
        elif prop.get("enum"):
            value = " | ".join(json.dumps(v) for v in prop["enum"])
        else:
            value = f"<{prop.get('description') or _PLACEHOLDERS.get(name, name)}>"
        fields.append(f"{json.dumps(name)}: {value}")
    return "{" + ", ".join(fields) + "}"


# --- cut JSON -------------------------------------------------------------------------------


def close_json(text: str) -> str:
    """The characters that complete whatever JSON `text` leaves open; "" when nothing is.

    For text written under a JSON grammar, which is valid up to where it was cut: an open
    string is closed, a key missing its value gets `null`, a trailing comma gets a
    placeholder member (`"_": null`, ignored by the action parser), then every open
    object and array is closed.
    """
    closers: list[str] = []
    in_string = escaped = is_key = False
    last = ""  # the last token outside strings: a punctuation mark, or "key" / "value"
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string, last = False, "key" if is_key else "value"
        elif char == '"':
            in_string = True
            is_key = bool(closers) and closers[-1] == "}" and last in ("{", ",")
        elif not char.isspace():
            if char in "{[":
                closers.append("}" if char == "{" else "]")
            elif char in "}]" and closers:
                closers.pop()
            last = char if char in "{[}],:" else "value"
    tail = ""
    if in_string:
        tail = ("\\" if escaped else "") + '"'
        last = "key" if is_key else "value"
    if last in (":", "key"):
        tail += "null" if last == ":" else ": null"
    elif last == "," and closers:
        tail += '"_": null' if closers[-1] == "}" else "null"
    return tail + "".join(reversed(closers))
