"""The user's Python functions as tools (`custom_tools:` in a backend's config).

A function's argument schema comes from its signature and type hints (pydantic), its
description from the config's `description` or else its docstring (the first paragraph;
Google-style `Args:` lines describe the parameters). The model's arguments are validated
against that schema before the function runs.

    sync function    runs in a daemon thread, off the event loop (at most
                     `MAX_LIVE_THREADS` at once)
    async function   awaited on the loop
    generator        (async or sync, the predecessor's streaming tools) run to its end; the
                     result is the text of its yields in order, concatenated as the
                     predecessor did, less those with `is_log=True`: those are progress,
                     shown live to the person watching (`ToolContext.progress`), never
                     to the model; at most `MAX_YIELDED_CHARS`, then the generator is
                     closed
    timeout          the call's bound (`orchestrator.tool_timeout_seconds`, less a margin
                     so the tool reports its own timeout); a thread that overruns it is
                     abandoned, not killed: Python cannot stop a thread
    exception        an error result the model reads (type and message, no traceback);
                     from a generator (or its timeout) with what it yielded before
    result           str as is; None as "(no output)"; dict/list as JSON; the
                     predecessor's `ExecutionResult` as its text blocks; else `str()`

Context. Parameters named by the predecessor's `@context_params(...)` decorator
(`massgen.tool.context_params`) are hidden from the model, like `preset_args`, and filled
at each call from the run (`tools/python_context.py`: the agent's id, its workspace, the
task, ...); a name massgen cannot fill is a config error when the tool loads.

Files. `tools/python_files.py` imports the configured files and builds an agent's
toolbox from its entries.

Effects. The permission engine sees a call as the user's own code:
`External("python", <tool name>)`, unless the function declares what it does, with the
`effects` decorator below (or by setting `__massgen_effects__` itself): either a tuple of
effects, or a function from the validated arguments to a tuple of effects.

    from massgen.tools.python import effects
    from massgen.core.effects import Read

    @effects(lambda args: (Read(Path(args["path"])),))
    def word_count(path: str) -> int: ...
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from massgen.core.effects import Effect, External
from massgen.core.toolbox import Progress, ToolContext, ToolResult, arguments_of
from massgen.core.types import ToolCall, ToolSpec
from massgen.tools.python_context import VALUES, AgentFacts, context_values

SERVER = "python"
EFFECTS_ATTRIBUTE = "__massgen_effects__"
# Seconds the tool keeps below the loop's bound, so its own timeout message wins.
TIMEOUT_MARGIN_SECONDS = 1.0
# Text a generator tool may yield for the model before it is closed (the result is cut
# again to `orchestrator.max_tool_result_bytes` on its way to the model).
MAX_YIELDED_CHARS = 1_000_000
CONTEXT_ATTRIBUTE = "__context_params__"  # massgen.tool.context_params sets it
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
    context: tuple[str, ...] = ()  # parameters filled from the run (`context_params`)


class UnknownContext(ValueError):
    """A `context_params` name massgen cannot fill."""


class PythonToolbox:
    """An agent's Python function tools."""

    def __init__(
        self, tools: Sequence[PythonTool], timeout_seconds: float, facts: AgentFacts | None = None
    ) -> None:
        self._tools = {tool.spec.name: tool for tool in tools}
        self._timeout = timeout_seconds
        self._facts = facts or AgentFacts()

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
        kwargs = {**arguments, **context_values(tool.context, ctx, self._facts), **tool.preset}
        yields = Yields(_on_loop(ctx.progress))
        try:
            value = await asyncio.wait_for(_invoke(tool.function, kwargs, yields), self._timeout)
        except TimeoutError:
            message = f"`{call.name}` timed out after {self._timeout:g}s."
            return ToolResult.error(call, message + yields.so_far())
        except Exception as error:  # the user's code: any failure is the model's to read
            message = f"`{call.name}` raised {type(error).__name__}: {error}"
            return ToolResult.error(call, message + yields.so_far())
        finally:
            yields.closed = True  # an abandoned sync generator stops at its next yield
        return ToolResult(call.id, result_text(value))


async def _invoke(function: Callable[..., Any], kwargs: dict[str, Any], yields: Yields) -> Any:
    if inspect.isasyncgenfunction(function):
        return await yields.collect(function(**kwargs))
    if inspect.iscoroutinefunction(function):
        return await function(**kwargs)
    value = await _in_thread(
        _call_through, {"function": function, "kwargs": kwargs, "yields": yields}
    )
    if inspect.isasyncgen(value):  # a sync wrapper around an async generator function
        return await yields.collect(value)
    if inspect.isawaitable(value):  # a sync wrapper around a coroutine function
        value = await value
    return value


def _call_through(function: Callable[..., Any], kwargs: dict[str, Any], yields: Yields) -> Any:
    """`function(**kwargs)`, a generator it returns drained here, in the same thread."""
    value = function(**kwargs)
    return yields.drain(value) if inspect.isgenerator(value) else value


def _on_loop(progress: Progress | None) -> Progress | None:
    """`progress`, callable from any thread: a sync generator is drained in a thread of its
    own, and the events it causes belong on the loop's."""
    if progress is None:
        return None
    loop = asyncio.get_running_loop()
    home = threading.get_ident()

    def report(message: str) -> None:
        if threading.get_ident() == home:
            progress(message)
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(progress, message)

    return report


class Yields:
    """What a generator tool yielded for the model, in order: each yield's text, less the
    log yields (`is_log`), at most MAX_YIELDED_CHARS. A log yield's text goes to
    `progress`, if given."""

    def __init__(self, progress: Progress | None = None) -> None:
        self._progress = progress
        self._parts: list[str] = []
        self._chars = 0
        self.cut = False
        self.closed = False  # the call ended: stop taking yields

    def take(self, item: Any) -> bool:
        """Keep `item`'s text; False once the generator should stop."""
        if self.closed:
            return False
        if item is None:
            return True
        text = _yielded_text(item)
        if getattr(item, "is_log", False):
            if self._progress is not None and text:
                self._progress(text)
            return True
        room = MAX_YIELDED_CHARS - self._chars
        self._parts.append(text[:room])
        self._chars += len(self._parts[-1])
        if self._chars >= MAX_YIELDED_CHARS:  # full: whatever it would yield next is lost
            self.cut = True
            return False
        return True

    def text(self) -> str:
        text = "".join(self._parts) or "(no output)"
        if self.cut:
            text += f"\n[output cut: the tool yielded more than {MAX_YIELDED_CHARS} characters]"
        return text

    def so_far(self) -> str:
        """For an error message: what was yielded before it, if anything."""
        return f" Its output before that:\n{self.text()}" if self._chars else ""

    async def collect(self, generator: Any) -> str:
        async for item in generator:
            if not self.take(item):
                await generator.aclose()
                break
        return self.text()

    def drain(self, generator: Any) -> str:
        for item in generator:
            if not self.take(item):
                generator.close()
                break
        return self.text()


def _yielded_text(item: Any) -> str:
    blocks = getattr(item, "output_blocks", None)
    if isinstance(blocks, list):  # the predecessor joined its stream's blocks as is
        return "".join(str(getattr(block, "data", block)) for block in blocks)
    return result_text(item)


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
    raw = arguments_of(text)
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
    (fixed, hidden from the model) and its `context_params` (filled from the run), with
    `defaults` replacing the signature's defaults (the model sees them and may pass
    another value).

    Raises:
        UnknownContext: a `context_params` name massgen cannot fill.
        ValueError: the signature has *args/**kwargs only, or `preset`/`defaults`/
            `context_params` names no parameter.
    """
    preset = dict(preset or {})
    defaults = dict(defaults or {})
    signature = inspect.signature(function)
    context = _context_names(function, preset)
    named = {"preset_args": preset, "default_params": defaults, "context_params": context}
    for key, given in named.items():
        unknown = sorted(set(given) - set(signature.parameters))
        if unknown:
            raise ValueError(f"{key} names no parameter of `{name}`: {', '.join(unknown)}")
    fields = _fields(function, signature, {*preset, *context}, defaults)
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    text = description or _summary(function.__doc__ or "") or f"Call the Python function {name}."
    return PythonTool(ToolSpec(name, text, schema), function, model, preset, context)


def _context_names(function: Callable[..., Any], preset: dict[str, Any]) -> tuple[str, ...]:
    """The parameters the function's `@context_params` asks massgen to fill (a preset one
    is the config's, not the run's).

    Raises:
        UnknownContext: a name massgen cannot fill.
    """
    context = tuple(sorted(set(getattr(function, CONTEXT_ATTRIBUTE, None) or ()) - set(preset)))
    unfillable = [n for n in context if n not in VALUES]
    if unfillable:
        raise UnknownContext(
            f"massgen cannot fill its context parameter `{unfillable[0]}` "
            f"(it fills {', '.join(f'`{n}`' for n in VALUES)})"
        )
    return context


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _fields(
    function: Callable[..., Any],
    signature: inspect.Signature,
    hidden: set[str],
    defaults: dict[str, Any],
) -> dict[str, Any]:
    """The model-facing parameters as pydantic fields: type from the (resolved) hints,
    default from `defaults` or the signature, description from the docstring."""
    docs = _parameter_docs(function.__doc__ or "")
    hints = _resolved_hints(function)
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.name in hidden or parameter.kind in _VARIADIC:
            continue
        annotation = (
            Any if parameter.annotation is inspect.Parameter.empty else parameter.annotation
        )
        default = defaults.get(
            parameter.name,
            ... if parameter.default is inspect.Parameter.empty else parameter.default,
        )
        fields[parameter.name] = (
            hints.get(parameter.name, annotation),
            Field(default=default, description=docs.get(parameter.name)),
        )
    return fields


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
