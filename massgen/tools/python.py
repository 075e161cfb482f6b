"""The user's Python functions as tools (`custom_tools:` in a backend's config).

A function's argument schema comes from its signature and type hints (pydantic), its
description from the config's `description` or else its docstring (the first paragraph;
Google-style `Args:` lines describe the parameters). The model's arguments are validated
against that schema before the function runs.

    sync function    runs in a daemon thread, off the event loop (at most
                     `MAX_LIVE_THREADS` at once)
    async function   awaited on the loop
    timeout          the call's bound (`orchestrator.tool_timeout_seconds`, less a margin
                     so the tool reports its own timeout); a thread that overruns it is
                     abandoned, not killed: Python cannot stop a thread
    exception        an error result the model reads (type and message, no traceback)
    result           str as is; None as "(no output)"; dict/list as JSON; the
                     predecessor's `ExecutionResult` as its text blocks; else `str()`

Effects. The permission engine sees a call as the user's own code:
`External("python", <tool name>)`, unless the function declares what it does, with the
`effects` decorator below (or by setting `__massgen_effects__` itself): either a tuple of
effects, or a function from the validated arguments to a tuple of effects.

    from massgen.tools.python import effects
    from massgen.tools.effects import Read

    @effects(lambda args: (Read(Path(args["path"])),))
    def word_count(path: str) -> int: ...
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import inspect
import json
import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from massgen.config.custom_tools import CustomTool
from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.core.errors import ConfigError
from massgen.core.types import ToolCall, ToolSpec
from massgen.tools.base import ToolContext, ToolResult
from massgen.tools.effects import Effect, External

SERVER = "python"
EFFECTS_ATTRIBUTE = "__massgen_effects__"
# Seconds the tool keeps below the loop's bound, so its own timeout message wins.
TIMEOUT_MARGIN_SECONDS = 1.0
_F = TypeVar("_F", bound=Callable[..., Any])
EffectsDeclaration = Sequence[Effect] | Callable[[dict[str, Any]], Sequence[Effect]]


def effects(declared: EffectsDeclaration) -> Callable[[_F], _F]:
    """Declare what calls of the decorated function do (see the module docstring)."""

    def mark(function: _F) -> _F:
        setattr(function, EFFECTS_ATTRIBUTE, declared)
        return function

    return mark


@dataclass(frozen=True, slots=True)
class PythonTool:
    spec: ToolSpec
    function: Callable[..., Any]
    arguments: type[BaseModel]
    preset: dict[str, Any]


class PythonToolbox:
    """An agent's Python function tools; an `EffectfulToolbox`."""

    def __init__(self, tools: Sequence[PythonTool], timeout_seconds: float) -> None:
        self._tools = {tool.spec.name: tool for tool in tools}
        self._timeout = timeout_seconds

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(tool.spec for tool in self._tools.values())

    def effects(self, call: ToolCall, ctx: ToolContext) -> tuple[Effect, ...]:
        """The declared effects, else `External("python", name)`.

        Raises:
            ValueError: malformed arguments, or a declaration that is not effects.
        """
        tool = self._tools.get(call.name)
        if tool is None:
            return ()
        declared = getattr(tool.function, EFFECTS_ATTRIBUTE, None)
        if declared is None:
            return (External(SERVER, call.name),)
        if callable(declared):
            declared = declared(_validated(tool, call.arguments))
        found = tuple(declared)
        if not all(isinstance(e, Effect) for e in found):
            raise ValueError(f"{call.name}: {EFFECTS_ATTRIBUTE} must give effects")
        return found

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolResult.error(call, f"tool `{call.name}` is not available.")
        try:
            arguments = _validated(tool, call.arguments)
        except ValueError as error:
            return ToolResult.error(call, str(error))
        try:
            value = await asyncio.wait_for(_invoke(tool, arguments), self._timeout)
        except TimeoutError:
            return ToolResult.error(call, f"`{call.name}` timed out after {self._timeout:g}s.")
        except Exception as error:  # the user's code: any failure is the model's to read
            return ToolResult.error(call, f"`{call.name}` raised {type(error).__name__}: {error}")
        return ToolResult(call.id, result_text(value))


async def _invoke(tool: PythonTool, arguments: dict[str, Any]) -> Any:
    kwargs = {**arguments, **tool.preset}
    if inspect.iscoroutinefunction(tool.function):
        return await tool.function(**kwargs)
    value = await _in_thread(tool.function, kwargs)
    if inspect.isawaitable(value):  # a sync wrapper around a coroutine function
        value = await value
    return value


# Sync calls still running (past their timeout, the thread cannot be stopped); past this
# many, a sync call is refused instead of starting yet another thread.
MAX_LIVE_THREADS = 32
_live_threads = 0
_threads_lock = threading.Lock()


async def _in_thread(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """`function(**kwargs)` in a daemon thread. Not `asyncio.to_thread`: the default
    executor is joined when the loop closes and at interpreter exit, so one hung tool
    would keep massgen from exiting (Ctrl-C included)."""
    global _live_threads
    with _threads_lock:
        if _live_threads >= MAX_LIVE_THREADS:
            raise RuntimeError(f"{MAX_LIVE_THREADS} earlier tool calls are still running")
        _live_threads += 1
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)

    def work() -> None:
        global _live_threads
        value, error = None, None
        try:
            value = function(**kwargs)
        except BaseException as caught:  # handed to the awaiting task, not lost
            error = caught
        finally:
            with _threads_lock:
                _live_threads -= 1
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=work, name="massgen-custom-tool", daemon=True).start()
    return await future


def _validated(tool: PythonTool, text: str) -> dict[str, Any]:
    """The model's arguments, checked and converted by the function's signature.

    Raises:
        ValueError: not a JSON object, or not what the signature asks for.
    """
    try:
        raw = json.loads(text or "{}")
    except json.JSONDecodeError as error:
        raise ValueError(f"the arguments are not valid JSON ({error}).") from None
    if not isinstance(raw, dict):
        raise ValueError("the arguments must be a JSON object.")
    try:
        model = tool.arguments.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in error.errors()
        )
        raise ValueError(f"invalid arguments: {problems}.") from None
    return {name: getattr(model, name) for name in type(model).model_fields}


def result_text(value: Any) -> str:
    if value is None:
        return "(no output)"
    if isinstance(value, str):
        return value
    blocks = getattr(value, "output_blocks", None)  # the predecessor's ExecutionResult
    if isinstance(blocks, list):
        return "\n".join(str(getattr(block, "data", block)) for block in blocks)
    if isinstance(value, dict | list | int | float | bool):
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            pass
    return str(value)


# ---------------------------------------------------------------- from a function


def tool_from_function(
    function: Callable[..., Any],
    name: str,
    description: str | None = None,
    preset: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
) -> PythonTool:
    """A tool over `function`: its schema from the signature, less the `preset` arguments
    (fixed, hidden from the model), with `defaults` replacing the signature's defaults (the
    model sees them and may pass another value).

    Raises:
        ValueError: the signature has *args/**kwargs only, or `preset`/`defaults` names no
            parameter.
    """
    preset = dict(preset or {})
    defaults = dict(defaults or {})
    signature = inspect.signature(function)
    for key, given in (("preset_args", preset), ("default_params", defaults)):
        unknown = sorted(set(given) - set(signature.parameters))
        if unknown:
            raise ValueError(f"{key} names no parameter of `{name}`: {', '.join(unknown)}")
    docs = _parameter_docs(function.__doc__ or "")
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.name in preset or parameter.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            continue
        annotation = (
            Any if parameter.annotation is inspect.Parameter.empty else parameter.annotation
        )
        default = defaults.get(
            parameter.name,
            ... if parameter.default is inspect.Parameter.empty else parameter.default,
        )
        fields[parameter.name] = (
            annotation,
            Field(default=default, description=docs.get(parameter.name)),
        )
    hints = _resolved_hints(function)
    for key, (annotation, field) in list(fields.items()):
        fields[key] = (hints.get(key, annotation), field)
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    text = description or _summary(function.__doc__ or "") or f"Call the Python function {name}."
    return PythonTool(ToolSpec(name, text, schema), function, model, preset)


def _resolved_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """Annotations as types (a module with `from __future__ import annotations` has them
    as strings); {} when they cannot be resolved (the raw annotations then stand)."""
    try:
        import typing

        return typing.get_type_hints(function)
    except Exception:  # a hint naming something undefined: fall back, don't fail the tool
        return {}


def _summary(doc: str) -> str:
    paragraph = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return " ".join(paragraph.split())


_ARG_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.+)$")


def _parameter_docs(doc: str) -> dict[str, str]:
    """Google-style `Args:` lines: parameter name -> its description."""
    text = inspect.cleandoc(doc)
    match = re.search(r"^(?:Args|Arguments|Parameters):\s*$", text, re.M)
    if match is None:
        return {}
    out: dict[str, str] = {}
    for line in text[match.end() :].splitlines()[1:]:
        if line and not line.startswith(" "):
            break
        found = _ARG_LINE.match(line)
        if found:
            out[found.group(1).lstrip("*")] = found.group(2).strip()
    return out


# ---------------------------------------------------------------- from the config


def python_toolbox(config: MassgenConfig, agent: AgentConfig, at: str) -> PythonToolbox | None:
    """`agent`'s function tools, importing each file once, or None when it has none.

    Raises:
        ConfigError: a file that does not import, or a name in it that is not a function,
            naming the file, the function and the key path (`at`.custom_tools[i]).
    """
    entries = agent.backend.custom_tools
    if not entries:
        return None
    tools: list[PythonTool] = []
    for index, entry in enumerate(entries):
        tools.extend(_entry_tools(entry, f"{at}.custom_tools[{index}]"))
    names = [tool.spec.name for tool in tools]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ConfigError(f"two custom tools are named `{twice}`", path=at, fix="Rename one")
    taken = next((n for n in names if n in reserved_names()), None)
    if taken is not None:
        raise ConfigError(
            f"custom tool `{taken}` has the name of one of massgen's own tools, which "
            "would hide it",
            path=f"{at}.custom_tools",
            fix="Rename the tool (`name:`); the function can keep its name",
        )
    timeout = max(config.orchestrator.tool_timeout_seconds - TIMEOUT_MARGIN_SECONDS, 0.5)
    return PythonToolbox(tools, timeout)


def reserved_names() -> frozenset[str]:
    """Names of massgen's own tools: the workflow actions, the file tools, the command
    tool, the planning tools and the skill tools."""
    from massgen.tools.planning import TOOL_NAMES as PLANNING
    from massgen.tools.skills import TOOL_NAMES as SKILLS
    from massgen.workspace.commands import NAME as COMMAND
    from massgen.workspace.files import SPECS

    return frozenset({"new_answer", "vote", COMMAND, *PLANNING, *SKILLS, *(s.name for s in SPECS)})


def _entry_tools(entry: CustomTool, at: str) -> list[PythonTool]:
    assert entry.path is not None  # `config.custom_tools.resolve` made it absolute
    module = _import(Path(entry.path), at)
    out = []
    for name, function_name, description in entry.tools():
        function = getattr(module, function_name, None)
        if not callable(function):
            raise ConfigError(
                f"`{entry.path}` has no function `{function_name}`", path=f"{at}.function"
            )
        try:
            out.append(
                tool_from_function(
                    function, name, description, entry.preset_args, entry.default_params
                )
            )
        except (ValueError, TypeError) as error:
            raise ConfigError(
                f"`{function_name}` in `{entry.path}` cannot be a tool: {error}",
                path=f"{at}.function",
            ) from None
    return out


_MODULES: dict[Path, Any] = {}


def _import(file: Path, at: str) -> Any:
    """The module at `file`, imported once per process under a private name."""
    if file in _MODULES:
        return _MODULES[file]
    digest = hashlib.sha256(str(file).encode()).hexdigest()[:12]
    name = f"massgen_custom_tools.{file.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"`{file}` cannot be imported", path=f"{at}.path")
    module = importlib.util.module_from_spec(spec)
    module.__package__ = _predecessor_package(file) or module.__package__
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's module failed: say which and why
        sys.modules.pop(name, None)
        raise ConfigError(
            f"`{file}` does not import ({type(error).__name__}: {error})",
            path=f"{at}.path",
            fix="Fix the module, or remove the tool",
        ) from None
    _MODULES[file] = module
    return module


def _predecessor_package(file: Path) -> str | None:
    """`massgen.tool.<sub>` for a file in the predecessor's tool tree
    (`.../massgen/tool/<sub>/<file>.py`), so its relative imports (`from .._result import
    ExecutionResult`) reach the compatibility names in `massgen.tool`; else None."""
    parts = file.parts
    for at in range(len(parts) - 2, 0, -1):
        if parts[at - 1 : at + 1] == ("massgen", "tool"):
            inner = parts[at + 1 : -1]
            if all(part.isidentifier() for part in inner):
                return ".".join(("massgen", "tool", *inner))
            return None
    return None
