"""`verifier.function`: a Python callable that checks an answer.

    def verify(answer: str, question: str, workspace: Path | None) -> bool | tuple[bool, str]

Sync or async. `module:function` is imported by name, else from `module.py` beside the
config file. It runs in this process (it is the user's own code, like `custom_tools`),
bounded by `timeout_seconds`: an async one is cancelled, a sync one runs in a daemon
thread that is left behind (Python cannot stop a thread) while the check is reported
`unchecked`. An exception, a return value of another type, or a function that cannot be
imported are `unchecked` too, with why; never a pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import importlib.util
import inspect
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from massgen.core.checks import Check, Verdict, bounded, unchecked
from massgen.log import logger

Function = Callable[[str, str, Path | None], Any]


class FunctionVerifier:
    def __init__(
        self,
        target: str,
        timeout_seconds: float,
        max_output_chars: int,
        base: Path | None = None,
    ) -> None:
        """`target`: `module:function`; `base`: the config file's directory."""
        self.target = target
        self.timeout_seconds = timeout_seconds
        self.max_output_chars = max_output_chars
        self.function, self.missing = _resolve(target, base)
        if self.missing:
            logger.warning("verifier.function: {}; every check will be unchecked", self.missing)

    async def check(self, answer: str, question: str, workspace: Path | None) -> Check:
        if self.function is None:
            return unchecked(self.missing or "no function")
        started = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(self.timeout_seconds):
                returned = await _call(self.function, answer, question, workspace)
        except TimeoutError:
            return unchecked(f"timed out after {self.timeout_seconds:g}s")
        except Exception as error:  # the user's code: whatever it raises is not a verdict
            return unchecked(bounded(f"crashed: {type(error).__name__}: {error}", 300))
        seconds = round(asyncio.get_running_loop().time() - started, 3)
        return self._verdict(returned, seconds)

    def _verdict(self, returned: Any, seconds: float) -> Check:
        message = ""
        if isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[1], str):
            returned, message = returned
        if not isinstance(returned, bool):
            kind = type(returned).__name__
            return unchecked(f"returned a {kind}, not a bool or (bool, str)")
        verdict = Verdict.PASSED if returned else Verdict.FAILED
        return Check(verdict, "", bounded(message, self.max_output_chars), seconds)


async def _call(function: Function, answer: str, question: str, workspace: Path | None) -> Any:
    if inspect.iscoroutinefunction(function):
        return await function(answer, question, workspace)
    returned = await _in_thread(function, answer, question, workspace)
    if inspect.isawaitable(returned):
        returned = await returned
    return returned


async def _in_thread(function: Function, *args: Any) -> Any:
    """`function(*args)` in a daemon thread: one that never returns cannot keep the
    process from exiting (an executor's worker would be joined at exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not done.done():
            outcome()

    def work() -> None:
        try:
            value = function(*args)
        except BaseException as error:  # handed to the awaiting task, raised there
            outcome = functools.partial(done.set_exception, error)
        else:
            outcome = functools.partial(done.set_result, value)
        with contextlib.suppress(RuntimeError):  # the loop closed while it ran (timed out)
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=work, name="massgen-verifier", daemon=True).start()
    return await done


def _resolve(target: str, base: Path | None) -> tuple[Function | None, str | None]:
    """(the function, None), or (None, why it cannot be had)."""
    module_name, _, name = target.partition(":")
    try:
        module = _module(module_name, base)
    except Exception as error:  # importing runs the user's module: anything may go wrong
        return None, f"cannot import `{module_name}` ({type(error).__name__}: {error})"
    if module is None:
        return (
            None,
            f"no module `{module_name}` (importable, or {module_name}.py beside the config)",
        )
    function = getattr(module, name, None)
    if not callable(function):
        return None, f"`{module_name}` has no function `{name}`"
    return function, None


def _module(name: str, base: Path | None) -> Any:
    """The module `name`: importable, else the file `name.py` under `base`; None: neither."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is None or not name.startswith(error.name):
            raise  # the module is there; one it imports is missing
    file = base.joinpath(*name.split(".")).with_suffix(".py") if base is not None else None
    if file is None or not file.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"massgen_verifier_{name}", file)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
