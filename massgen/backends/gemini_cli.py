"""`type: gemini_cli`: Gemini CLI itself as a team member, through its Agent Client
Protocol mode (`gemini --acp`, JSON-RPC over stdio; `acp.py`).

Each `stream` is one agent turn: a Gemini CLI process started in the member's workspace,
one ACP session, one prompt, then the process (and anything it started) ended:

    every tool call -> Gemini CLI asks (`session/request_permission`: massgen's admin
                     policy makes every tool ask, `gemini_cli_tools.py`) -> `Binding.decide`
                     (the run's permission engine: rules, ledger, approvals, headless
                     policy); an error there is a deny
    its file writes -> `fs/write_text_file`, served here: only a file the engine allowed
                     in this turn, beneath the workspace, never through a symlink
    workflow actions -> the JSON object the turn's last message ends with (the profile has
                     no tool calling of ours: `structured_actions`), checked by coordination
    its updates     -> TextChunk, ReasoningChunk, ToolCallStarted/Finished, Usage

The child gets only the environment it needs, built from nothing: a few variables of
massgen's and the config's key and endpoint (else the user's own Gemini CLI login).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from massgen.backends import acp, gemini_cli_tools
from massgen.backends.agent_host import BoundHost, passed
from massgen.backends.base import Binding
from massgen.backends.gemini_cli_tools import COMMAND, NPM_PACKAGE
from massgen.backends.profiles import Profile
from massgen.config.schema import BackendConfig
from massgen.core import events as ev
from massgen.core import safe_open
from massgen.core.errors import BackendError
from massgen.core.types import (
    BackendEvent,
    Finish,
    Message,
    ReasoningChunk,
    Request,
    TextChunk,
    Usage,
)

MAX_RESULT_CHARS = 4000  # of a tool result, shown in a ToolCallFinished event
MAX_TEXT_CHARS = 2_000_000  # of the turn's text kept for its action
# Gemini CLI's system-wide policies replace massgen's `--admin-policy`: with any there,
# massgen cannot say every call asks it, so the member refuses to run.
SYSTEM_POLICIES = Path("/etc/gemini-cli/policies")
PASSED_ENV = frozenset(  # with agent_host.SHELL_ENV
    [
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "GEMINI_CLI_HOME",
        "GOOGLE_CLOUD_PROJECT",  # a Workspace account's login names its project
    ]
)
JSON_NOTE = (
    "When you have finished, end your reply with exactly one JSON object, and nothing "
    "after it, that matches this JSON schema:\n{schema}"
)


class GeminiCliBackend(BoundHost):
    provider, title = "gemini_cli", "Gemini CLI"
    effects = staticmethod(gemini_cli_tools.effects)  # what its tool calls would do

    async def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        binding = self.bound()
        if any(SYSTEM_POLICIES.glob("*.toml")):
            raise BackendError(
                f"Gemini CLI's system policies in {SYSTEM_POLICIES} would replace massgen's, "
                "so its tool calls could run without massgen's permission engine",
                provider="gemini_cli",
            )
        turn = _Turn(binding)
        with tempfile.TemporaryDirectory(prefix="massgen-gemini-cli-") as conf:
            argv = self._argv(Path(conf), binding)
            env = child_env(os.environ, self.api_key, self.base_url)
            env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = str(Path(conf) / "settings.json")
            async for event in self._converse(turn, argv, env, _prompt(request)):
                yield event
        yield from_text(turn.final_text, request.json_schema is not None)
        yield turn.usage
        yield Finish("stop")

    def _argv(self, conf: Path, binding: Binding) -> list[str]:
        policy = conf / "massgen.toml"
        policy.write_text(gemini_cli_tools.policy_toml())
        settings = gemini_cli_tools.system_settings(self.cfg.hosted.web_search)
        (conf / "settings.json").write_text(json.dumps(settings))
        argv = [_command(), "--acp", "--admin-policy", str(policy), "--approval-mode", "default"]
        if self.model:
            argv += ["--model", self.model]
        for path in binding.context_paths:
            argv += ["--include-directories", str(path)]
        return argv

    async def _converse(
        self, turn: _Turn, argv: list[str], env: dict[str, str], prompt: str
    ) -> AsyncIterator[BackendEvent]:
        """Runs the CLI for one prompt, yielding its stream as it comes."""
        queue: asyncio.Queue[BackendEvent | None] = asyncio.Queue()
        turn.out = queue.put_nowait
        try:
            conn = await acp.Connection.start(
                argv, str(turn.binding.workspace), env, turn.serve, turn.update
            )
        except OSError as error:
            raise BackendError(
                f"Gemini CLI could not start: {error}", provider="gemini_cli"
            ) from None
        talk = asyncio.create_task(self._talk(conn, turn, prompt))
        talk.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await talk
        except TimeoutError:
            raise BackendError(
                f"Gemini CLI did not finish its turn within {self.turn_seconds:g}s",
                provider="gemini_cli",
            ) from None
        except acp.Ended as error:
            raise BackendError(_ended(error, conn), provider="gemini_cli") from None
        except acp.RemoteError as error:
            raise BackendError(f"Gemini CLI failed: {error}", provider="gemini_cli") from None
        finally:
            talk.cancel()
            await asyncio.gather(talk, return_exceptions=True)
            await conn.close()

    async def _talk(self, conn: acp.Connection, turn: _Turn, prompt: str) -> None:
        async with asyncio.timeout(self.turn_seconds):
            capabilities = {"fs": {"readTextFile": False, "writeTextFile": True}}
            await conn.request(
                "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
            )
            workspace = str(turn.binding.workspace)
            session = await conn.request("session/new", {"cwd": workspace, "mcpServers": []})
            params = {
                "sessionId": session["sessionId"],
                "prompt": [{"type": "text", "text": prompt}],
            }
            result = await conn.request("session/prompt", params)
        turn.finished(result or {})


def _ended(error: acp.Ended, conn: acp.Connection) -> str:
    tail = conn.stderr_tail
    return f"Gemini CLI {error}" + (f": {tail[-500:]}" if tail else "")


def _command() -> str:
    found = shutil.which(COMMAND)
    if found is None:
        raise BackendError(
            f"Gemini CLI (`{COMMAND}`) is not on PATH: npm install -g {NPM_PACKAGE}",
            provider="gemini_cli",
        )
    return found


def child_env(
    environ: Mapping[str, str], api_key: str | None, base_url: str | None
) -> dict[str, str]:
    """The CLI's whole environment: what it needs of massgen's, no other secret of it;
    the key and endpoint are the config's (else Gemini CLI's own login)."""
    env = {k: v for k, v in environ.items() if passed(k, PASSED_ENV)}
    env["GEMINI_CLI_NO_RELAUNCH"] = "true"  # one process, not a relaunched child
    env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"  # the workspace is massgen's own
    if api_key:
        env["GEMINI_API_KEY"] = api_key
    if base_url:
        env["GOOGLE_GEMINI_BASE_URL"] = base_url
    return env


class _Turn:
    """One agent turn's state: what its calls were allowed to write, its text, usage."""

    def __init__(self, binding: Binding) -> None:
        self.binding = binding
        self.writable: set[str] = set()
        self.text: list[str] = []
        self.size = 0
        self.names: dict[str, str] = {}
        self.usage = Usage()
        self.out: Any = lambda event: None

    # --- the agent's requests -----------------------------------------------------------

    async def serve(self, method: str, params: dict[str, Any]) -> Any:
        if method == "session/request_permission":
            return await self._permission(params)
        if method == "fs/write_text_file":
            return self._write(params)
        raise ValueError(f"massgen does not serve {method}")

    async def _permission(self, params: dict[str, Any]) -> dict[str, Any]:
        call = _obj(params.get("toolCall"))
        call_id = str(call.get("toolCallId") or "")
        kind, title = str(call.get("kind") or ""), str(call.get("title") or "")
        name = gemini_cli_tools.tool_name(call_id, title, kind)
        arguments: dict[str, Any] = {"kind": kind, "title": title, "call_id": call_id}
        arguments["locations"] = call.get("locations") or []
        self._started(call_id, name, arguments)
        try:
            refusal = await self.binding.decide(call_id, name, arguments)
        except Exception:  # fail closed: an error is never a yes
            refusal = "the permission check failed"
        given = params.get("options")
        options = given if isinstance(given, list) else []
        wanted = "allow_once" if refusal is None else "reject_once"
        chosen = next((o for o in options if isinstance(o, dict) and o.get("kind") == wanted), None)
        if chosen is None:
            return {"outcome": {"outcome": "cancelled"}}
        if refusal is None:
            cwd = self.binding.workspace
            self.writable |= {str(p) for p in gemini_cli_tools.paths_of(arguments, cwd)}
        return {"outcome": {"outcome": "selected", "optionId": chosen.get("optionId")}}

    def _write(self, params: dict[str, Any]) -> None:
        """A file write the engine allowed in this turn, beneath the workspace only."""
        path, content = params.get("path"), params.get("content")
        if not isinstance(path, str) or not isinstance(content, str):
            raise ValueError("fs/write_text_file needs a path and content")
        if path not in self.writable:
            raise PermissionError(f"massgen's permission engine did not allow writing {path}")
        root = self.binding.workspace.resolve()
        rel = os.path.relpath(path, root)
        if rel.startswith("..") or os.path.isabs(rel):
            raise PermissionError(f"{path} is outside the workspace")
        fd = safe_open.open_root(root)
        try:
            safe_open.write_atomic(fd, rel, content.encode())
        finally:
            os.close(fd)
        return None

    # --- its updates ----------------------------------------------------------------------

    def update(self, method: str, params: dict[str, Any]) -> None:
        update = params.get("update") if isinstance(params.get("update"), dict) else None
        if method != "session/update" or update is None:
            return
        kind = update.get("sessionUpdate")
        content = _obj(update.get("content"))
        if kind == "agent_message_chunk" and isinstance(content.get("text"), str):
            self._said(content["text"])
        elif kind == "agent_thought_chunk" and isinstance(content.get("text"), str):
            self.out(ReasoningChunk(content["text"]))
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(update)

    def _said(self, text: str) -> None:
        if self.size + len(text) <= MAX_TEXT_CHARS:
            self.text.append(text)
            self.size += len(text)

    def _tool(self, update: dict[str, Any]) -> None:
        """A tool call's progress. What the model said before it was thinking aloud: only
        the turn's last message carries the answer."""
        if self.text:
            self.out(ReasoningChunk("".join(self.text)))
            self.text, self.size = [], 0
        call_id = str(update.get("toolCallId") or "")
        name = gemini_cli_tools.tool_name(call_id, "", str(update.get("kind") or ""))
        self._started(
            call_id, name, {"title": update.get("title"), "locations": update.get("locations")}
        )
        status = update.get("status")
        if status in ("completed", "failed") and call_id in self.names:
            self.binding.emit(
                ev.ToolCallFinished(
                    agent=self.binding.agent,
                    call_id=call_id,
                    name=self.names.pop(call_id),
                    result=_result_text(update.get("content"))[:MAX_RESULT_CHARS],
                    ok=status == "completed",
                )
            )

    def _started(self, call_id: str, name: str, arguments: Mapping[str, Any]) -> None:
        if call_id in self.names or not call_id:
            return
        self.names[call_id] = name
        self.binding.emit(
            ev.ToolCallStarted(
                agent=self.binding.agent,
                call_id=call_id,
                name=name,
                arguments=json.dumps(arguments),
            )
        )

    def finished(self, result: Mapping[str, Any]) -> None:
        tokens = _obj(_obj(_obj(result.get("_meta")).get("quota")).get("token_count"))
        self.usage = Usage(
            input_tokens=int(tokens.get("input_tokens") or 0),
            output_tokens=int(tokens.get("output_tokens") or 0),
        )
        if result.get("stopReason") not in (None, "end_turn"):
            raise BackendError(
                f"Gemini CLI ended its turn early ({result.get('stopReason')})",
                provider="gemini_cli",
            )

    @property
    def final_text(self) -> str:
        return "".join(self.text)


def from_text(text: str, structured: bool) -> BackendEvent:
    """The turn's last message; for a workflow action, the JSON object it ends with."""
    if structured:
        found = last_object(text)
        if found is not None:
            return TextChunk(found)
    return TextChunk(text)


def last_object(text: str) -> str | None:
    """The last JSON object in `text` (the action), written on its own."""
    decoder = json.JSONDecoder()
    start = text.rfind("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return json.dumps(value)
        start = text.rfind("{", 0, start)
    return None


def _obj(value: Any) -> dict[str, Any]:
    """A JSON object of the agent's, or an empty one for anything else it sent."""
    return value if isinstance(value, dict) else {}


def _result_text(content: Any) -> str:
    parts = []
    for item in content if isinstance(content, list) else []:
        inner = item.get("content") if isinstance(item, dict) else None
        if isinstance(inner, dict) and isinstance(inner.get("text"), str):
            parts.append(inner["text"])
        elif isinstance(item, dict) and item.get("type") == "diff":
            parts.append(f"changed {item.get('path')}")
    return "\n".join(parts)


def _prompt(request: Request) -> str:
    """The turn as one prompt: massgen's instructions, the conversation so far and, when
    coordination wants a workflow action, the JSON it must end with."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system")
    said = [m for m in request.messages if m.role != "system"]
    body = said[0].content if len(said) == 1 else "\n\n".join(_line(m) for m in said)
    parts = [system, body]
    if request.json_schema is not None:
        parts.append(JSON_NOTE.format(schema=json.dumps(request.json_schema)))
    return "\n\n".join(part for part in parts if part)


def _line(message: Message) -> str:
    if message.role == "tool":
        return f"[result of your tool call]\n{message.content}"
    return f"[{message.role}]\n{message.content}"


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> GeminiCliBackend:
    """The entry point of `wires.GEMINI_CLI`."""
    return GeminiCliBackend.create(cfg, api_key)
