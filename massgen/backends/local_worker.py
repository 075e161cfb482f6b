"""The embedded model's own process: one llama.cpp context that generates on request.

Why a process. llama.cpp is native code; a crash in it (a segfault in a CPU kernel, an
abort on a bad tensor) would otherwise take the whole team down with exit 139 and no
word. In a child process a crash ends one generation: the parent sees the pipe close,
fails that agent with a message that names the local backend, and the rest of the team
finishes. The weights are mmapped, so every worker of a model shares the same pages.

Run by the parent as `python -m massgen.backends.local_worker PATH THREADS N_CTX`; it speaks
JSON lines. Parent to worker: `{"id": N, "kwargs": {...}, "schema": {...} | null}` starts a
generation, `{"cancel": N}` stops it within a token. Worker to parent: one `{"ready": ...}`
(or `{"error": ..., "kind": "load"}`) after loading, then per generation `{"text": ...}`
lines and one closing `{"done": ...}` or `{"error": ..., "kind": ...}`. The worker exits
when its stdin closes, so it never outlives the parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from queue import Queue
from typing import Any

# Weight repacking into "extra" buffer types (AMX on recent Xeons) crashes inside
# ggml_backend_amx_mul_mat on some CPUs when llama.cpp was built with -march=native, which
# llama-cpp-python does by default. Plain CPU buffers work everywhere, at a small cost in
# prompt speed, and do not depend on which CPU built the library.
LOAD_PARAMS: dict[str, Any] = {"use_extra_bufts": False, "use_mmap": True}


def main(argv: list[str]) -> int:
    path, threads, n_ctx = argv[0], int(argv[1]), int(argv[2])
    out = _Output(sys.stdout)
    try:
        llm = load(path, threads=threads, n_ctx=n_ctx)
    except Exception as error:
        out.send({"error": f"{type(error).__name__}: {error}", "kind": "load"})
        return 1
    out.send({"ready": True, "load_params": loaded_params(llm)})
    requests: Queue[dict[str, Any] | None] = Queue()
    cancelled: set[int] = set()
    threading.Thread(target=_read_commands, args=(requests, cancelled), daemon=True).start()
    while (request := requests.get()) is not None:
        _serve(llm, request, cancelled, out)
    return 0


def load(path: str, *, threads: int, n_ctx: int) -> Any:
    """A llama.cpp context over `path`, loaded with `LOAD_PARAMS`."""
    import llama_cpp

    with _model_params(LOAD_PARAMS):
        return llama_cpp.Llama(
            model_path=path,
            n_ctx=n_ctx,
            n_batch=256,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,  # llama.cpp's own chatter stays off the terminal
        )


def loaded_params(llm: Any) -> dict[str, Any]:
    """The load parameters `llm` was really created with, read back from llama.cpp's struct."""
    params = llm.model_params
    return {
        "use_extra_bufts": bool(params.use_extra_bufts),
        "use_mmap": params.load_mode != 0,
    }


@contextlib.contextmanager
def _model_params(settings: dict[str, Any]) -> Iterator[None]:
    """Make llama-cpp-python's `Llama` start from our model parameters.

    Its constructor takes no `use_extra_bufts`; it builds its struct from
    `llama_model_default_params()`, so that is where ours go in, for this one load in this
    one-threaded process.
    """
    import llama_cpp.llama_cpp as api

    default = api.llama_model_default_params

    def ours() -> Any:
        params = default()
        params.use_extra_bufts = settings["use_extra_bufts"]
        return params

    api.llama_model_default_params = ours
    try:
        yield
    finally:
        api.llama_model_default_params = default


# --- serving ------------------------------------------------------------------------------


class _Output:
    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        with self._lock:
            self._stream.write(json.dumps(message) + "\n")
            self._stream.flush()


def _read_commands(requests: Queue[dict[str, Any] | None], cancelled: set[int]) -> None:
    for line in sys.stdin:
        command = json.loads(line)
        if "cancel" in command:
            cancelled.add(command["cancel"])
        else:
            requests.put(command)
    # The parent is gone (or closed us): nothing more will be asked, so leave at once.
    os._exit(0)


def _serve(llm: Any, request: dict[str, Any], cancelled: set[int], out: _Output) -> None:
    ident = request["id"]
    try:
        text, finish = "", None
        for piece, reason in _chunks(llm, request):
            if ident in cancelled:
                break
            if piece:
                text += piece
                out.send({"text": piece})
            finish = reason or finish
        output = len(llm.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0
        usage = [max(llm.n_tokens - output, 0), output]
        out.send({"done": finish or "stop", "usage": usage, "cancelled": ident in cancelled})
    except ValueError as error:  # llama-cpp-python's way of saying "too long" or "bad"
        kind = "context" if "context window" in str(error) else "bad"
        out.send({"error": str(error), "kind": kind})
    except Exception as error:
        out.send({"error": f"{type(error).__name__}: {error}", "kind": "other"})
    finally:
        cancelled.discard(ident)


def _chunks(llm: Any, request: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
    kwargs = dict(request["kwargs"])
    if request.get("schema") is not None:
        from massgen.backends.json_actions import grammar

        kwargs["grammar"] = grammar(request["schema"])
    chunks = llm.create_chat_completion(**kwargs, stream=True)
    try:
        for chunk in chunks:
            choice = chunk["choices"][0]
            yield choice.get("delta", {}).get("content") or "", choice.get("finish_reason")
    finally:
        chunks.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
