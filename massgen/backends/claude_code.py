"""`type: claude_code`: Claude Code itself as a team member, through `claude-agent-sdk`.

Each `stream` is one agent turn run by the Claude Code CLI (bundled with the SDK) in the
member's workspace, with Claude Code's own tools and tool loop:

    request.tools -> an in-process MCP server `massgen`: the member's own (guarded) tools
                     run there; the others (`new_answer`, `vote`, ...) are recorded, and
                     reported back as `ToolCall`s when the turn ends
    every tool call -> the PreToolUse hook -> `Binding.decide` (the run's permission
                     engine: rules, ledger, approvals, headless policy); an error there
                     is a deny. The SDK's permission callback (`can_use_tool`) lets only
                     calls the hook allowed through: Claude Code does not ask it about
                     reads inside its working directory, so the hook is the checkpoint.
    its stream    -> TextChunk, ReasoningChunk, ToolCallStarted/Finished, Usage

The child gets only the environment it needs: the SDK passes massgen's whole environment
on, so every other variable is overridden with an empty value.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from massgen.backends import claude_code_tools
from massgen.backends.agent_host import BoundHost, passed
from massgen.backends.base import Binding
from massgen.backends.profiles import Profile
from massgen.config.schema import BackendConfig
from massgen.core import events as ev
from massgen.core.errors import BackendError
from massgen.core.toolbox import ToolContext
from massgen.core.types import (
    BackendEvent,
    Finish,
    Message,
    ReasoningChunk,
    Request,
    TextChunk,
    ToolCall,
    ToolSpec,
    Usage,
)

MAX_TURNS = 40  # Claude Code's model calls in one agent turn
MAX_RESULT_CHARS = 4000  # of a tool result, shown in a ToolCallFinished event
# What the child keeps of massgen's environment besides agent_host.SHELL_ENV: a shell, a
# home for Claude Code's own login and settings.
PASSED_ENV = frozenset(["SHELL", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"])
# The config's `permission_mode` -> the mode Claude Code runs in. The engine decides every
# call at the hook in any mode; `bypassPermissions` would also skip the permission callback
# (and the CLI refuses it as root), so it is read as "edits need no prompt", the rest of
# what it asked for being the engine's to decide.
MODES = {"default": "default", "acceptEdits": "acceptEdits", "plan": "plan"}
MODES["bypassPermissions"] = "acceptEdits"
WEB_TOOLS = ("WebSearch", "WebFetch")  # Claude Code's, given with `enable_web_search`
RECORDED = "Recorded. Your turn is over: stop now, without calling any other tool or writing more."
TURN_OVER = "the turn is over: the workflow action was recorded"


class ClaudeCodeBackend(BoundHost):
    provider, title = "claude_code", "Claude Code"
    effects = staticmethod(claude_code_tools.effects)  # what its tool calls would do

    async def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        binding = self.bound()
        import claude_agent_sdk as sdk

        turn = _Turn(binding, request)
        options = self._options(sdk, turn, _system(request))
        try:
            async with asyncio.timeout(self.turn_seconds):
                async for message in sdk.query(prompt=_prompt(request), options=options):
                    for event in turn.read(sdk, message):
                        yield event
        except TimeoutError:
            raise BackendError(
                f"Claude Code did not finish its turn within {self.turn_seconds:g}s",
                provider="claude_code",
            ) from None
        except sdk.ClaudeSDKError as error:
            raise BackendError(f"Claude Code failed: {error}", provider="claude_code") from None
        for call in turn.reported:
            yield call
        yield Finish("tool_calls" if turn.reported else "stop")

    def _options(self, sdk: Any, turn: _Turn, system: str) -> Any:
        cfg = self.cfg
        own = cfg.claude_code
        return sdk.ClaudeAgentOptions(
            cwd=str(turn.binding.workspace),
            add_dirs=[str(p) for p in turn.binding.context_paths],
            model=self.model,
            system_prompt=system_prompt(cfg, system),
            # Claude Code's own tools it is given (None: all); massgen's come on its server.
            tools=list(own.tools) if own.tools is not None else None,
            disallowed_tools=disallowed(cfg),
            mcp_servers={claude_code_tools.SERVER: turn.server(sdk)},
            # The hook decides every call in every mode: a deny there holds even under
            # bypassPermissions (tests/backends/test_claude_code.py).
            hooks={"PreToolUse": [sdk.HookMatcher(matcher=None, hooks=[turn.pre_tool_use])]},
            can_use_tool=turn.can_use_tool,
            permission_mode=MODES.get(own.permission_mode or "default", "default"),
            setting_sources=[],  # the user's Claude Code settings loosen no rule of ours
            max_turns=own.max_turns or MAX_TURNS,
            env=child_env(os.environ, self.api_key, self.base_url),
        )


def disallowed(cfg: BackendConfig) -> list[str]:
    """The config's, and, as in the predecessor, the web tools unless `enable_web_search`."""
    web = () if cfg.hosted.web_search else WEB_TOOLS
    return list(dict.fromkeys([*cfg.claude_code.disallowed_tools, *web]))


def system_prompt(cfg: BackendConfig, system: str) -> Any:
    """Claude Code's own system prompt, or the config's in its place; massgen's team
    instructions (`system`) and the config's `append_system_prompt` follow either."""
    own = cfg.claude_code
    tail = "\n\n".join(part for part in (system, own.append_system_prompt) if part)
    if own.system_prompt:
        return "\n\n".join(part for part in (own.system_prompt, tail) if part)
    return {"type": "preset", "preset": "claude_code", "append": tail}


def child_env(
    environ: Mapping[str, str], api_key: str | None, base_url: str | None
) -> dict[str, str]:
    """The variables the SDK lays over massgen's environment for the CLI: every one not
    needed is blanked; the key and endpoint are the config's (else Claude Code's login)."""
    env = {k: "" for k in environ if not passed(k, PASSED_ENV)}
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    env["ENABLE_TOOL_SEARCH"] = "false"  # massgen's tools offered as they are, not deferred
    if api_key:
        env["ANTHROPIC_API_KEY"] = api_key
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    return env


class _Turn:
    """One agent turn's state: the calls allowed, the actions reported, the names of the
    tools it started (for their results' events)."""

    def __init__(self, binding: Binding, request: Request) -> None:
        self.binding = binding
        self.request = request
        self.own = {spec.name for spec in binding.toolbox.specs()}
        self.allowed: set[str] = set()
        self.reported: list[ToolCall] = []
        self.started: dict[str, str] = {}
        self.ctx = ToolContext(binding.agent, "coordination", binding.workspace)

    def server(self, sdk: Any) -> Any:
        tools = [self._tool(sdk, spec) for spec in self.request.tools]
        return sdk.create_sdk_mcp_server(claude_code_tools.SERVER, tools=tools)

    def _tool(self, sdk: Any, spec: ToolSpec) -> Any:
        async def handle(arguments: dict[str, Any]) -> dict[str, Any]:
            call = ToolCall(f"cc_{uuid.uuid4().hex[:12]}", spec.name, json.dumps(arguments))
            if spec.name not in self.own:  # a workflow action: coordination judges it
                self.reported.append(call)
                return _text(RECORDED)
            result = await self.binding.toolbox.call(call, self.ctx)
            return _text(result.content, error=result.is_error)

        return sdk.tool(spec.name, spec.description, spec.parameters)(handle)

    async def pre_tool_use(self, data: Any, tool_use_id: str | None, context: Any) -> Any:
        name, arguments = data.get("tool_name", ""), data.get("tool_input") or {}
        try:
            refusal = await self._refusal(str(tool_use_id or ""), name, arguments)
        except Exception as error:  # fail closed: an error is never a yes
            refusal = f"the permission check failed ({type(error).__name__})"
        if refusal is None and tool_use_id:
            self.allowed.add(tool_use_id)
        decision = "allow" if refusal is None else "deny"
        output = {"hookEventName": "PreToolUse", "permissionDecision": decision}
        if refusal is not None:
            output["permissionDecisionReason"] = refusal
        return {"hookSpecificOutput": output}

    async def _refusal(self, call_id: str, name: str, arguments: Mapping[str, Any]) -> str | None:
        if self.reported and name.removeprefix(claude_code_tools.OWN_PREFIX) not in self.own:
            return TURN_OVER
        if name.startswith(claude_code_tools.OWN_PREFIX):
            return None  # massgen's own server: its tools are judged where they run
        return await self.binding.decide(call_id, name, arguments)

    async def can_use_tool(self, name: str, arguments: Any, context: Any) -> Any:
        import claude_agent_sdk as sdk

        if getattr(context, "tool_use_id", None) in self.allowed:
            return sdk.PermissionResultAllow()
        return sdk.PermissionResultDeny(message="not allowed by massgen's permission engine")

    def read(self, sdk: Any, message: Any) -> list[BackendEvent]:
        """The events of one SDK message; tool calls and results go to the run's sink."""
        if isinstance(message, sdk.AssistantMessage):
            return [e for block in message.content if (e := self._block(sdk, block)) is not None]
        if isinstance(message, sdk.UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, sdk.ToolResultBlock):
                    self._finished(block)
        if isinstance(message, sdk.ResultMessage):
            if message.is_error:
                raise BackendError(
                    f"Claude Code ended its turn with an error ({message.subtype})",
                    provider="claude_code",
                )
            return [_usage(message.usage or {}, message.total_cost_usd)]
        return []

    def _block(self, sdk: Any, block: Any) -> BackendEvent | None:
        if isinstance(block, sdk.TextBlock):
            return TextChunk(block.text)
        if isinstance(block, sdk.ThinkingBlock):
            return ReasoningChunk(block.thinking)
        if isinstance(block, sdk.ToolUseBlock):
            name = block.name.removeprefix(claude_code_tools.OWN_PREFIX)
            if name in {spec.name for spec in self.request.tools} - self.own:
                return None  # a workflow action: shown as the answer or vote it becomes
            self.started[block.id] = name
            self.binding.emit(
                ev.ToolCallStarted(
                    agent=self.binding.agent,
                    call_id=block.id,
                    name=name,
                    arguments=json.dumps(block.input),
                )
            )
        return None

    def _finished(self, block: Any) -> None:
        name = self.started.pop(block.tool_use_id, None)
        if name is None:
            return
        content = block.content
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        self.binding.emit(
            ev.ToolCallFinished(
                agent=self.binding.agent,
                call_id=block.tool_use_id,
                name=name,
                result=str(content or "")[:MAX_RESULT_CHARS],
                ok=not block.is_error,
            )
        )


def _text(text: str, *, error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if error:
        result["is_error"] = True
    return result


def _usage(usage: Mapping[str, Any], cost: float | None) -> Usage:
    """The turn's tokens, and what Claude Code says they cost (its own price table: a
    subscription's turns cost what the same tokens would over the API)."""
    cached = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0) + cached + written,
        output_tokens=int(usage.get("output_tokens") or 0),
        cached_input_tokens=cached,
        billed_usd=float(cost) if cost is not None else None,
    )


def _system(request: Request) -> str:
    return "\n\n".join(m.content for m in request.messages if m.role == "system")


async def _prompt(request: Request) -> AsyncIterator[dict[str, Any]]:
    """The turn as one user message (streamed: the SDK's permission callback needs it)."""
    yield {"type": "user", "message": {"role": "user", "content": transcript(request)}}


def transcript(request: Request) -> str:
    """The conversation so far. The first call of a turn is the task alone; a retry after a
    rejected action also carries what was said and why it was rejected."""
    said = [m for m in request.messages if m.role != "system"]
    if len(said) == 1:
        return said[0].content
    return "\n\n".join(_line(m) for m in said)


def _line(message: Message) -> str:
    if message.role == "tool":
        return f"[result of your tool call]\n{message.content}"
    calls = "".join(f"\n[you called {c.name}({c.arguments})]" for c in message.tool_calls)
    return f"[{message.role}]\n{message.content}{calls}"


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> ClaudeCodeBackend:
    """The entry point of `wires.CLAUDE_CODE`."""
    return ClaudeCodeBackend.create(cfg, api_key)
