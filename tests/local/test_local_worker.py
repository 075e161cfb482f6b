"""The worker processes: how llama.cpp is loaded, what a crash does, what a worker sees."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import massgen
from massgen.backends import local, local_pool, local_worker
from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.core.types import GenerationParams, Message, Request, TextChunk

STORY = Request((Message("user", "Write a very long story about a lighthouse keeper."),))


def test_models_load_without_the_repacked_buffers_that_crash_on_amx(model):
    # Asked for, and read back from the struct llama.cpp really got: a machine without AMX
    # still catches a change that would take the crashing path on one with it.
    assert local_worker.LOAD_PARAMS["use_extra_bufts"] is False
    for worker in model.workers():
        assert worker.load_params == {"use_extra_bufts": False, "use_mmap": True}


async def _kill_once_text_flows(
    model: local_pool.LocalModel, backend: local.LocalBackend
) -> Exception:
    try:
        async for event in backend.stream(STORY):
            if isinstance(event, TextChunk):
                (worker,) = model.busy()
                os.kill(worker.proc.pid, signal.SIGSEGV)  # what a native crash looks like
    except Exception as error:
        return error
    raise AssertionError("the stream ended normally after its worker was killed")


async def test_a_crash_in_llama_cpp_fails_that_generation_with_a_clear_message(model):
    backend = local.LocalBackend(model, params=GenerationParams(max_tokens=400, seed=1))
    error = await _kill_once_text_flows(model, backend)

    assert isinstance(error, local_pool.WorkerDied)
    message = str(error)
    assert "local" in message and "crashed" in message and "SIGSEGV" in message
    assert "rest of the team goes on" in message and "GGML_NATIVE=OFF" in message
    # The dead worker left the pool; the next generation gets a fresh one and works.
    for _ in range(100):
        if model.borrowed == 0:
            break
        await asyncio.sleep(0.05)
    assert all(w.alive for w in model.workers())
    again = local.LocalBackend(model, params=GenerationParams(max_tokens=8, seed=2))
    events = [e async for e in again.stream(STORY)]
    assert "".join(e.text for e in events if isinstance(e, TextChunk)).strip()


def test_a_worker_sees_no_api_keys_and_finds_this_massgen(model, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-456")
    worker = local_pool.Worker(model.path, threads=1)
    try:
        environ = Path(f"/proc/{worker.proc.pid}/environ").read_bytes().split(b"\0")
        names = {item.split(b"=", 1)[0].decode() for item in environ if item}
        assert "OPENAI_API_KEY" not in names and "MY_SERVICE_TOKEN" not in names
        assert b"sk-test-secret-123" not in b"\0".join(environ)
        source = str(Path(massgen.__file__).resolve().parent.parent)
        assert f"PYTHONPATH={source}".encode() in environ
    finally:
        worker.close()
    assert worker.proc.returncode is not None  # closed means gone


def test_a_worker_leaves_when_its_parent_closes_the_pipe(model):
    worker = local_pool.Worker(model.path, threads=1)
    assert worker.proc.stdin is not None
    worker.proc.stdin.close()  # what the parent's death does to it
    assert worker.proc.wait(timeout=10) == 0
    worker.close()


async def test_a_crash_fails_one_agent_and_the_team_finishes(model):
    team = {
        "agents": [
            {"id": f"a{n}", "backend": {"type": "local", "max_tokens": 48, "seed": n}}
            for n in range(3)
        ],
        "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"},
    }
    killed, finished = False, None
    async for event in massgen.stream("Name a colour.", config=team, logs=False):
        if isinstance(event, ev.TextDelta) and not killed and model.busy():
            os.kill(model.busy()[0].proc.pid, signal.SIGSEGV)
            killed = True
        if isinstance(event, ev.RunFinished):
            finished = event.outcome
    assert killed and finished is not None
    assert finished.status == "degraded" and finished.answer.strip()
    (error,) = finished.failed_agents.values()
    assert "crashed" in error and "SIGSEGV" in error


def test_a_model_that_takes_too_long_to_load_is_a_config_error(model, monkeypatch):
    monkeypatch.setattr(local_pool, "LOAD_TIMEOUT_S", 0.001)
    try:
        local_pool.Worker(model.path, threads=1)
    except ConfigError as error:
        assert "took over" in str(error) and "backend.model" in str(error)
    else:
        raise AssertionError("a worker that had not loaded in time was accepted")


async def test_closing_a_model_ends_a_stuck_generation_and_its_worker(model):
    own = local_pool.LocalModel(model.path, name="stuck-test", report=lambda _: None)
    backend = local.LocalBackend(own, params=GenerationParams(max_tokens=400, seed=3))
    stream = backend.stream(STORY)
    async for event in stream:
        if isinstance(event, TextChunk):
            break
    (worker,) = own.busy()
    os.kill(worker.proc.pid, signal.SIGSTOP)  # llama.cpp stuck: no more tokens, no exit
    closer = asyncio.get_running_loop().run_in_executor(None, own.close)
    await asyncio.wait_for(closer, timeout=15)
    await stream.aclose()
    assert worker.proc.poll() is not None  # killed, not left behind
