"""The embedded model's processes: a pool of llama.cpp workers per model file.

Each `Worker` is one `local_worker` process holding one llama.cpp context; a `LocalModel`
lends its workers to one generation at a time and drops those that died; `shared_model`
keeps one `LocalModel` per file for the process. See `local.py` for why processes.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from massgen.backends import local_models
from massgen.core.errors import BackendError, ConfigError

N_CTX = 4096
MAX_CONTEXTS = 4
# How long a worker may take to load its model before it counts as failed.
LOAD_TIMEOUT_S = 300.0

Report = Callable[[str], None]


# --- worker processes ----------------------------------------------------------------------

# What a worker may see of the environment: enough to run Python and llama.cpp, never a key.
_ENV_NAMES = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TZ", "SYSTEMROOT"})
_ENV_PREFIXES = ("LC_", "OMP_", "OPENBLAS_", "GGML_", "LLAMA_")


def worker_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment for a worker: `env`'s harmless variables, and a PYTHONPATH that finds
    this very massgen (a source checkout as well as an install)."""
    kept = {k: v for k, v in env.items() if k in _ENV_NAMES or k.startswith(_ENV_PREFIXES)}
    kept["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
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
        self._load(report or report_to_stderr)

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


def kill_workers() -> None:
    """For a process that exits at once (a second Ctrl-C): no time to ask them to leave."""
    for model in tuple(_MODELS.values()):
        for worker in tuple(model._all):
            with contextlib.suppress(OSError):
                worker.proc.kill()


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


def report_to_stderr(message: str) -> None:
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
