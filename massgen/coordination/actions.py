"""Workflow actions: the two ways an agent ends its turn, as tools or as a JSON object.

Whether the model called a function or wrote a JSON object (models without function
calling), the result goes through the same parsing and validation here. A model that
writes JSON calls its other tools with a third object, `{"action": "tool", "name": ...,
"arguments": {...}}`, offered when it has tools; that becomes an ordinary `ToolCall`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from massgen.core.types import ToolCall, ToolSpec

NEW_ANSWER = "new_answer"
VOTE = "vote"
WORKFLOW_TOOLS = frozenset({NEW_ANSWER, VOTE})
USE_TOOL = "tool"  # the JSON action that calls one of the agent's other tools


@dataclass(frozen=True, slots=True)
class NewAnswer:
    content: str


@dataclass(frozen=True, slots=True)
class CastVote:
    label: str
    reason: str


@dataclass(frozen=True, slots=True)
class UseTool:
    """A JSON action asking to run one of the agent's tools (not a workflow action)."""

    name: str
    arguments: dict[str, Any]

    def call(self, call_id: str) -> ToolCall:
        return ToolCall(call_id, self.name, json.dumps(self.arguments))


@dataclass(frozen=True, slots=True)
class Invalid:
    """The model's action could not be accepted; `reason` is shown to the model."""

    reason: str


Action = NewAnswer | CastVote | UseTool | Invalid


def new_answer_tool() -> ToolSpec:
    return ToolSpec(
        name=NEW_ANSWER,
        description=(
            "Publish your complete answer to the ORIGINAL MESSAGE. It replaces any earlier "
            "answer of yours, so include everything, not just the changes."
        ),
        parameters={
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "Your full answer."},
            },
            "required": ["content"],
            "additionalProperties": False,
        },
    )


def vote_tool(labels: list[str]) -> ToolSpec:
    return ToolSpec(
        name=VOTE,
        description="Vote for the CURRENT ANSWER that best addresses the ORIGINAL MESSAGE.",
        parameters={
            "type": "object",
            "properties": {
                "agent_id": {
                    "type": "string",
                    "enum": list(labels),
                    "description": "The label of the answer you vote for, e.g. agent2.1.",
                },
                "reason": {"type": "string", "description": "Why this answer is the best."},
            },
            "required": ["agent_id", "reason"],
            "additionalProperties": False,
        },
    )


def workflow_tools(vote_labels: list[str], *, can_answer: bool) -> tuple[ToolSpec, ...]:
    tools = [new_answer_tool()] if can_answer else []
    if vote_labels:
        tools.append(vote_tool(vote_labels))
    return tuple(tools)


def action_schema(
    vote_labels: list[str], *, can_answer: bool, tools: Sequence[ToolSpec] = ()
) -> dict[str, Any]:
    """The JSON schema for a model that answers with a JSON object instead of a tool call;
    with `tools`, a third option calls one of them by name."""
    options: list[dict[str, Any]] = []
    if can_answer:
        options.append(
            {
                "type": "object",
                "properties": {"action": {"const": NEW_ANSWER}, "content": {"type": "string"}},
                "required": ["action", "content"],
            }
        )
    if vote_labels:
        options.append(
            {
                "type": "object",
                "properties": {
                    "action": {"const": VOTE},
                    "agent_id": {"type": "string", "enum": list(vote_labels)},
                    "reason": {"type": "string"},
                },
                "required": ["action", "agent_id", "reason"],
            }
        )
    if tools:
        # First: a small model copies the first shape it is shown, and a model given
        # tools for the task should reach for them before it answers.
        options[:0] = [_tool_option(tool) for tool in tools]
    return options[0] if len(options) == 1 else {"anyOf": options}


def _tool_option(tool: ToolSpec) -> dict[str, Any]:
    """One option per tool, so a grammar holds the arguments to that tool's schema."""
    return {
        "type": "object",
        "properties": {
            "action": {"const": USE_TOOL},
            "name": {"const": tool.name},
            "arguments": tool.parameters,
        },
        "required": ["action", "name", "arguments"],
    }


def tools_note(tools: Sequence[ToolSpec]) -> str:
    """The tools, in words, for a model that calls them through JSON actions (it is sent
    no function specs)."""
    lines = [
        "You can use these tools. To call one, reply with "
        '{"action": "tool", "name": <tool name>, "arguments": {...}}; its result comes '
        "back in the next message. When you know enough, reply with your workflow action.",
    ]
    for tool in tools:
        properties = tool.parameters.get("properties") or {}
        args = ", ".join(f"{name}: {prop.get('type', 'any')}" for name, prop in properties.items())
        lines.append(f"- {tool.name}({args}): {tool.description}".rstrip(": "))
    return "\n".join(lines)


def parse_tool_calls(calls: list[ToolCall]) -> Action:
    """Turn the workflow calls of one model response into exactly one action."""
    workflow = [call for call in calls if call.name in WORKFLOW_TOOLS]
    if not workflow:
        return Invalid(
            "You did not call a workflow tool. Finish by calling `vote` or `new_answer`."
        )
    if len(workflow) > 1:
        return Invalid("Call exactly one workflow tool: either `vote` or `new_answer`, once.")
    call = workflow[0]
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return Invalid(f"The arguments of `{call.name}` were not valid JSON.")
    return _action_from(call.name, arguments)


def parse_json_action(text: str, *, tools: bool = False) -> Action:
    """Parse an action written as a JSON object (structured-output mode); `tools` when
    the model was offered the `tool` action."""
    try:
        data = json.loads(_strip_fences(text))
    except json.JSONDecodeError:
        return Invalid(
            'Reply with one JSON object only, e.g. {"action": "new_answer", "content": "..."}.'
        )
    if not isinstance(data, dict):
        return Invalid("Reply with one JSON object, not a list or a plain value.")
    if tools and data.get("action") == USE_TOOL:
        return _use_tool(data)
    return _action_from(str(data.get("action", "")), data)


def _use_tool(data: dict[str, Any]) -> Action:
    name, arguments = data.get("name"), data.get("arguments", {})
    if not isinstance(name, str) or not name.strip():
        return Invalid("A `tool` action needs `name`: the tool to call.")
    if not isinstance(arguments, dict):
        return Invalid(f"The `arguments` of tool `{name}` must be an object.")
    return UseTool(name.strip(), arguments)


def _action_from(name: str, arguments: Any) -> Action:
    if not isinstance(arguments, dict):
        return Invalid(f"The arguments of `{name}` must be an object.")
    if name == NEW_ANSWER:
        content = arguments.get("content")
        if not isinstance(content, str) or not content.strip():
            return Invalid("`new_answer` needs a non-empty `content` string.")
        return NewAnswer(content.strip())
    if name == VOTE:
        label, reason = arguments.get("agent_id"), arguments.get("reason", "")
        if not isinstance(label, str) or not label.strip():
            return Invalid("`vote` needs `agent_id`: the label of an answer, e.g. agent2.1.")
        return CastVote(label.strip(), reason.strip() if isinstance(reason, str) else "")
    return Invalid(f"Unknown action {name!r}. Use `vote` or `new_answer`.")


def _strip_fences(text: str) -> str:
    """Small models often wrap JSON in a ``` block; accept it."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text
