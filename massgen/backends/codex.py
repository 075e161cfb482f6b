"""`type: codex`: OpenAI's Codex CLI itself as a team member, through its app server.

Each `stream` is one agent turn: a `codex app-server` child (`codex_rpc.py`) in the
member's workspace, one ephemeral thread, one turn, with Codex's own tools and tool loop:

    request.tools -> the thread's dynamic tools: Codex calls them back (`item/tool/call`);
                     the member's own (guarded) tools run in its toolbox, the others
                     (`new_answer`, `vote`, ...) are recorded and end the turn, reported
                     back as `ToolCall`s
    its commands and file changes -> the approval policy `untrusted` makes Codex ask for
                     each one; `Binding.decide` (the run's permission engine) answers. Any
                     error, and every other kind of request, is a no
    what it runs  -> Codex's sandbox under massgen's permission profile
                     (`codex_tools.permission_profile`): writes only in the workspace, no
                     network, no way out of the sandbox
    its stream    -> TextChunk, ReasoningChunk, ToolCallStarted/Finished, Usage

Auth: with an API key (the config's or OPENAI_API_KEY) Codex talks to `base_url` (OpenAI's
by default) as a custom provider from a private Codex home; without one it uses the
user's own Codex home and login. The child gets only the environment it needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from massgen.backends import codex_rpc, codex_tools
from massgen.backends.agent_host import BoundHost, passed
from massgen.backends.base import Binding
from massgen.backends.claude_code import transcript
from massgen.backends.profiles import Profile
from massgen.config.schema import BackendConfig
from massgen.core import events as ev
from massgen.core.errors import BackendError
from massgen.core.toolbox import ToolContext
from massgen.core.types import (
    BackendEvent,
    Finish,
    ReasoningChunk,
    Request,
    TextChunk,
    ToolCall,
    Usage,
)

MAX_RESULT_CHARS = 4000  # of a tool result, shown in a ToolCallFinished event
OPENAI = "https://api.openai.com/v1"
PASSED_ENV = frozenset(["SHELL"])  # with agent_host.SHELL_ENV
RECORDED = "Recorded. Your turn is over."
CLIENT = {"name": "massgen", "title": "MassGen", "version": "1"}


class CodexBackend(BoundHost):
    provider, title = "codex", "Codex"
    effects = staticmethod(codex_tools.effects)  # what its tool calls would do

    async def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        binding = self.bound()
        cli = codex_tools.find_cli(self.cfg.codex_path, os.environ)
        if cli is None:
            raise BackendError(
                f"the Codex CLI is not installed ({codex_tools.INSTALL})", provider="codex"
            )
        home = self._home()
        turn = _Turn(binding, request)
        server = await codex_rpc.AppServer.start(
            [str(cli), "app-server", *self._overrides()],
            child_env(os.environ, self.api_key, home),
            binding.workspace,
        )
        try:
            async with asyncio.timeout(self.turn_seconds):
                await turn.open(server, self._thread(binding, cli, home, request))
                async for event in turn.events(server):
                    yield event
        except TimeoutError:
            raise BackendError(
                f"Codex did not finish its turn within {self.turn_seconds:g}s", provider="codex"
            ) from None
        finally:
            await server.close()
        yield turn.usage()
        for call in turn.reported:
            yield call
        yield Finish("tool_calls" if turn.reported else "stop")

    def _home(self) -> Path:
        """A private Codex home where massgen gives the key (never under /tmp: Codex will
        not set up its sandbox helper there), else the user's own, with their login."""
        if self.api_key or self.cfg.base_url:
            home = codex_tools.cache_dir(os.environ) / "codex-home"
            home.mkdir(parents=True, exist_ok=True, mode=0o700)
            return home
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")

    def _overrides(self) -> list[str]:
        """`-c` settings: the provider (where a key or endpoint is given), no web search
        unless `enable_web_search`, the reasoning effort when set, no analytics."""
        out = ["analytics.enabled=false"]
        out.append(f'web_search="{"live" if self.cfg.hosted.web_search else "disabled"}"')
        if effort := self.cfg.generation_params().reasoning_effort:  # Codex's own setting
            out.append(f'model_reasoning_effort="{effort}"')
        if self.api_key or self.cfg.base_url:
            url = json.dumps(self.cfg.base_url or OPENAI)
            out += ['model_provider="massgen"', 'model_providers.massgen.name="massgen"']
            out += [f"model_providers.massgen.base_url={url}"]
            out += ['model_providers.massgen.wire_api="responses"']
            if self.api_key:
                out += ['model_providers.massgen.env_key="OPENAI_API_KEY"']
        return [part for setting in out for part in ("-c", setting)]

    def _thread(self, binding: Binding, cli: Path, home: Path, request: Request) -> dict[str, Any]:
        profile = codex_tools.permission_profile(
            binding.workspace, binding.context_paths, cli, home, self.cfg.hosted.web_search
        )
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        tools = [
            {
                "type": "function",
                "name": spec.name,
                "description": spec.description,
                "inputSchema": spec.parameters,
            }
            for spec in request.tools
        ]
        params: dict[str, Any] = {
            "cwd": str(binding.workspace),
            "approvalPolicy": "untrusted",  # Codex asks before every command and change
            "approvalsReviewer": "user",  # asks massgen, not its automatic reviewer
            "ephemeral": True,
            "config": profile,
            "developerInstructions": system or None,
            "dynamicTools": tools,
        }
        if self.model:
            params["model"] = self.model
        return params


def child_env(environ: Mapping[str, str], api_key: str | None, home: Path) -> dict[str, str]:
    """The whole environment of the CLI: a shell's basics, its home, the key if given."""
    env = {k: v for k, v in environ.items() if passed(k, PASSED_ENV)}
    env["CODEX_HOME"] = str(home)
    if api_key:
        env["OPENAI_API_KEY"] = api_key
    return env


class _Turn:
    """One agent turn's state: the items Codex started, the actions reported, its usage."""

    def __init__(self, binding: Binding, request: Request) -> None:
        self.binding = binding
        self.request = request
        self.own = {spec.name for spec in binding.toolbox.specs()}
        self.items: dict[str, dict[str, Any]] = {}
        self.reported: list[ToolCall] = []
        self.total: Mapping[str, Any] = {}
        self.thread = self.turn = ""
        self.interrupted = False
        self.ctx = ToolContext(binding.agent, "coordination", binding.workspace)

    async def open(self, server: codex_rpc.AppServer, thread: dict[str, Any]) -> None:
        capabilities = {"experimentalApi": True}  # dynamic tools are experimental
        await server.request("initialize", {"clientInfo": CLIENT, "capabilities": capabilities})
        await server.notify("initialized")
        started = await server.request("thread/start", thread)
        _check_held(started)
        self.thread = started["thread"]["id"]
        text = {"type": "text", "text": transcript(self.request)}
        begun = await server.request("turn/start", {"threadId": self.thread, "input": [text]})
        self.turn = begun["turn"]["id"]

    async def events(self, server: codex_rpc.AppServer) -> AsyncIterator[BackendEvent]:
        while True:
            message = await server.incoming.get()
            if codex_rpc.closed(message):
                raise await server.failed("exited before its turn ended")
            method, params = message["method"], message.get("params") or {}
            if "id" in message:
                await self.answer(server, message["id"], method, params)
            elif method == "item/agentMessage/delta":
                yield TextChunk(str(params.get("delta", "")))
            elif method in ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta"):
                yield ReasoningChunk(str(params.get("delta", "")))
            elif method == "item/started":
                self._started(params.get("item") or {})
            elif method == "item/completed":
                self._finished(params.get("item") or {})
            elif method == "thread/tokenUsage/updated":
                self.total = (params.get("tokenUsage") or {}).get("total") or {}
            elif method == "turn/completed":
                self._ended(params.get("turn") or {})
                return

    def _ended(self, turn: Mapping[str, Any]) -> None:
        if turn.get("status") == "failed":
            error = turn.get("error") or {}
            raise BackendError(f"Codex ended its turn with an error: {error.get('message')}",
                               provider="codex")  # fmt: skip

    async def answer(self, server: codex_rpc.AppServer, rid: Any, method: str, params: Any) -> None:
        """Codex's requests: approvals go to the engine (an error is a no); a call of a
        dynamic tool runs or is recorded; anything else is refused."""
        if method == "item/tool/call":
            await server.respond(rid, await self._tool(params))
        elif method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
            refusal = await self._refusal(method, params)
            if refusal is not None and not self.reported:
                await self._tell(server, refusal)
            await server.respond(rid, {"decision": "accept" if refusal is None else "decline"})
        elif method == "item/permissions/requestApproval":
            await server.respond(rid, {"permissions": {}})  # no widening of its sandbox
        elif method == "mcpServer/elicitation/request":
            await server.respond(rid, {"action": "decline", "content": None})
        else:
            await server.refuse(rid, f"massgen does not answer {method}")
        if self.reported and not self.interrupted:  # the action ends the turn
            self.interrupted = True
            await server.request("turn/interrupt", {"threadId": self.thread, "turnId": self.turn})

    async def _refusal(self, method: str, params: Mapping[str, Any]) -> str | None:
        """None: the engine allows the call; else why not (an error is a no)."""
        if self.reported:
            return "the turn is over: the workflow action was recorded"
        if params.get("additionalPermissions") or params.get("grantRoot"):
            return "massgen does not widen Codex's sandbox"
        item_id = str(params.get("itemId") or "")
        if method == "item/fileChange/requestApproval":
            changes = (self.items.get(item_id) or {}).get("changes")
            name, arguments = codex_tools.PATCH, {"changes": changes}
        else:
            name = codex_tools.COMMAND
            arguments = {"command": params.get("command"), "cwd": params.get("cwd")}
        try:
            return await self.binding.decide(item_id, name, arguments)
        except Exception as error:  # fail closed: an error is never a yes
            return f"the permission check failed ({type(error).__name__})"

    async def _tell(self, server: codex_rpc.AppServer, refusal: str) -> None:
        """The refusal's reason, for Codex's model: a declined call reads to it only as
        "rejected by user" (the approval answer carries no reason), so the reason joins the
        turn as input (`turn/steer`), sent before the decline so that the model request
        that follows the declined call has it."""
        text = {"type": "text", "text": f"[massgen] Your last call did not run: {refusal}"}
        steer = {"threadId": self.thread, "expectedTurnId": self.turn, "input": [text]}
        with contextlib.suppress(BackendError):  # the ledger has it either way
            await server.request("turn/steer", steer)

    async def _tool(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name, arguments = str(params.get("tool") or ""), params.get("arguments") or {}
        call = ToolCall(f"cx_{uuid.uuid4().hex[:12]}", name, json.dumps(arguments))
        if self.reported:
            return _content("The turn is over: the workflow action was recorded.", ok=False)
        if name not in self.own:  # a workflow action: coordination judges it
            self.reported.append(call)
            return _content(RECORDED)
        result = await self.binding.toolbox.call(call, self.ctx)
        return _content(result.content, ok=not result.is_error)

    def _started(self, item: Mapping[str, Any]) -> None:
        shown = _shown(item, self.own)
        if shown is None:
            return
        self.items[str(item.get("id"))] = dict(item)
        name, arguments = shown
        self.binding.emit(ev.ToolCallStarted(
            agent=self.binding.agent, call_id=str(item.get("id")), name=name, arguments=arguments
        ))  # fmt: skip

    def _finished(self, item: Mapping[str, Any]) -> None:
        shown = _shown(item, self.own)
        if shown is None or str(item.get("id")) not in self.items:
            return
        self.items.pop(str(item.get("id")))
        output = item.get("aggregatedOutput") or item.get("status") or ""
        if item.get("type") == "dynamicToolCall":
            parts = item.get("contentItems") or []
            output = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
        self.binding.emit(
            ev.ToolCallFinished(
                agent=self.binding.agent,
                call_id=str(item.get("id")),
                name=shown[0],
                result=str(output)[:MAX_RESULT_CHARS],
                ok=item.get("status") == "completed",
            )
        )

    def usage(self) -> Usage:
        """The thread's tokens, as Codex counts them (its input includes the cached)."""
        total = self.total
        return Usage(
            input_tokens=int(total.get("inputTokens") or 0),
            output_tokens=int(total.get("outputTokens") or 0),
            reasoning_tokens=int(total.get("reasoningOutputTokens") or 0),
            cached_input_tokens=int(total.get("cachedInputTokens") or 0),
        )


def _check_held(started: Mapping[str, Any]) -> None:
    """The thread must run under massgen's profile and ask massgen. The thread's own
    settings win over the user's config.toml (a `sandbox_mode` there is checked not to
    replace the profile); should a later Codex decide otherwise, the turn does not start."""
    profile = (started.get("activePermissionProfile") or {}).get("id")
    asks = (started.get("approvalPolicy"), started.get("approvalsReviewer"))
    if profile != codex_tools.PROFILE or asks != ("untrusted", "user"):
        raise BackendError(
            f"Codex would not run under massgen's sandbox and approvals (profile {profile!r}, "
            f"approvals {asks[0]!r} reviewed by {asks[1]!r}); check `sandbox_mode`, "
            "`default_permissions` and `approvals_reviewer` in your Codex config.toml",
            provider="codex",
        )


def _shown(item: Mapping[str, Any], own: set[str]) -> tuple[str, str] | None:
    """An item as a tool call in massgen's events: its name and arguments; None for the
    rest (messages, reasoning, and workflow actions, shown as what they become)."""
    kind = item.get("type")
    if kind == "commandExecution":
        return codex_tools.COMMAND, json.dumps({"command": item.get("command")})
    if kind == "fileChange":
        paths = [c.get("path") for c in item.get("changes") or [] if isinstance(c, dict)]
        return codex_tools.PATCH, json.dumps({"paths": paths})
    if kind == "dynamicToolCall" and item.get("tool") in own:
        return str(item.get("tool")), json.dumps(item.get("arguments") or {})
    return None


def _content(text: str, *, ok: bool = True) -> dict[str, Any]:
    return {"contentItems": [{"type": "inputText", "text": text}], "success": ok}


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> CodexBackend:
    """The entry point of `wires.CODEX`."""
    return CodexBackend.create(cfg, api_key)
