"""`python -m bench.local`: the embedded models' speed and accuracy, written into the local
section of `docs/benchmarks.md` (between its markers; `python -m bench` keeps the section).

    python -m bench.local                    # every installed catalogue model
    python -m bench.local --team-limit 3     # team runs on the first 3 of each set only
    python -m bench.local --quick            # 3 questions, no teams, printed not written

Speed: tokens per second per context and in total, with 1, 2 and 3 agents generating at
once, each in its own single-threaded worker (and one agent with two threads, to check
the one-thread choice). Accuracy: 20 facts and 20 two-to-three-step word problems at
temperature 0, one call each, and as a three-agent team of that model.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import threading
import time
from pathlib import Path

from bench import report
from bench.local_questions import FACTS, PROBLEMS
from bench.proc import ROOT
from massgen.backends import local, local_models, local_pool
from massgen.core.types import GenerationParams, Message, Request, TextChunk, Usage

BEGIN, END = "<!-- local models: begin -->", "<!-- local models: end -->"
STORY = "Write a long story about a lighthouse keeper and a storm."
SPEED_TOKENS = 128


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    models = local_models.installed_models()
    limit = 3 if args.quick else None
    team_limit = 0 if args.quick else args.team_limit
    sections = [_section(model, limit, team_limit) for model in models]
    text = _render(models, sections, team_limit)
    if args.quick:
        print(text)
    else:
        write(ROOT / "docs" / "benchmarks.md", text)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.local")
    parser.add_argument("--quick", action="store_true", help="3 questions, no teams; print")
    parser.add_argument("--team-limit", type=int, default=5, help="team questions per set")
    return parser


def write(
    doc: Path, section: str, begin: str = BEGIN, end: str = END, *, first_at_top: bool = False
) -> None:
    """Put `section` between the markers in `doc`, the rest of it as it was (appended the
    first time, or put at the top with `first_at_top`)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    block = f"{begin}\n{section}\n{end}"
    if begin in text and end in text:
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        text = f"{head}{block}{tail}"
    elif first_at_top:
        text = f"{block}\n\n{text.lstrip()}" if text.strip() else f"{block}\n"
    else:
        text = f"{text.rstrip()}\n\n{block}\n"
    doc.write_text(text, encoding="utf-8")
    print(f"wrote {doc}")


def kept_section(doc: Path, begin: str = BEGIN, end: str = END) -> str:
    """A marked section of `doc` as it stands, markers included ('' if none)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    if begin not in text or end not in text:
        return ""
    return begin + text.partition(begin)[2].partition(end)[0] + end


# --- measuring ------------------------------------------------------------------------------


def _section(model: local_models.PackagedModel, limit: int | None, team_limit: int) -> dict:
    path = local_models.built_path(model, report=print)
    shared = local_pool.shared_model(path, report=lambda _: None)
    print(f"{model.name}: speed")
    speed = {n: asyncio.run(_speed(shared, n)) for n in (1, 2, 3)}
    two_threads = _two_thread_speed(path)
    print(f"{model.name}: accuracy")
    single = asyncio.run(_accuracy(shared, limit))
    team = _team_accuracy(model, team_limit) if team_limit else None
    return {
        "model": model,
        "speed": speed,
        "two_threads": two_threads,
        "single": single,
        "team": team,
    }


async def _speed(model: local_pool.LocalModel, agents: int) -> tuple[float, float]:
    """(tokens/s per context, tokens/s in total) with `agents` generating at once."""
    params = GenerationParams(max_tokens=SPEED_TOKENS, temperature=0.8, seed=1)
    backends = [local.LocalBackend(model, params=params) for _ in range(agents)]
    request = Request((Message("user", STORY),))

    async def one(backend: local.LocalBackend) -> tuple[int, float]:
        started, first, tokens = time.monotonic(), None, 0
        async for event in backend.stream(request):
            if isinstance(event, TextChunk) and first is None:
                first = time.monotonic()
            if isinstance(event, Usage):
                tokens = event.output_tokens
        return tokens, time.monotonic() - (first or started)

    started = time.monotonic()
    runs = await asyncio.gather(*(one(b) for b in backends))
    wall = time.monotonic() - started
    per_context = sum(tokens / seconds for tokens, seconds in runs) / len(runs)
    return per_context, sum(tokens for tokens, _ in runs) / wall


def _two_thread_speed(path: Path) -> float:
    """Tokens/s of one generation in one worker given two threads."""
    worker = local_pool.Worker(path, threads=2)
    try:
        kwargs = {
            "messages": [{"role": "user", "content": STORY}],
            "max_tokens": SPEED_TOKENS,
            "temperature": 0.8,
            "seed": 1,
        }
        first, done = None, None
        for message in worker.generate(kwargs, None, threading.Event()):
            if "text" in message and first is None:
                first = time.monotonic()
            if "done" in message:
                done = message
        assert done is not None and first is not None
        return done["usage"][1] / (time.monotonic() - first)
    finally:
        worker.close()


async def _accuracy(
    model: local_pool.LocalModel, limit: int | None
) -> dict[str, tuple[int, int, float]]:
    params = GenerationParams(max_tokens=256, temperature=0, seed=1)
    backend = local.LocalBackend(model, params=params)
    system = Message("system", "Answer the question. For arithmetic, end with the number.")
    out = {}
    for name, items, right in (("facts", FACTS, _fact_right), ("math", PROBLEMS, _math_right)):
        chosen = items[:limit] if limit else items
        started, correct = time.monotonic(), 0
        for question, expected in chosen:
            events = [e async for e in backend.stream(Request((system, Message("user", question))))]
            text = "".join(e.text for e in events if isinstance(e, TextChunk))
            correct += right(text, expected)
        out[name] = (correct, len(chosen), (time.monotonic() - started) / len(chosen))
    return out


def _team_accuracy(
    model: local_models.PackagedModel, limit: int
) -> dict[str, tuple[int, int, float]]:
    import massgen

    team = {
        "agents": [
            {
                "id": f"a{n}",
                "backend": {
                    "type": "local",
                    "model": model.name,
                    "seed": n,
                    "temperature": t,
                    "max_tokens": 256,
                },
            }
            for n, t in enumerate((0.0, 0.4, 0.8))
        ],
        "orchestrator": {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"},
    }
    out = {}
    for name, items, right in (("facts", FACTS, _fact_right), ("math", PROBLEMS, _math_right)):
        started, correct = time.monotonic(), 0
        for question, expected in items[:limit]:
            result = massgen.run(question, config=team, logs=False)
            correct += right(result.answer, expected)
        out[name] = (correct, limit, (time.monotonic() - started) / limit)
    return out


def _fact_right(text: str, accepted: tuple[str, ...]) -> bool:
    words = re.findall(r"[a-z0-9]+", text.lower())
    joined = " ".join(words)
    return any(re.search(rf"\b{re.escape(a)}\b", joined) for a in accepted)


def _math_right(text: str, answer: int) -> bool:
    numbers = re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    return bool(numbers) and float(numbers[-1]) == answer


# --- the section ----------------------------------------------------------------------------


def _render(models: list[local_models.PackagedModel], sections: list[dict], team_limit: int) -> str:
    names = ", ".join(m.name for m in models)
    parts = [
        "## 10. Local models",
        f"Written by `python -m bench.local` on {time.strftime('%Y-%m-%d')} for the installed "
        f"models ({names}), on the machine above (1-minute load average {_load():.2f} at the "
        "end); the embedded models run on its CPU, so these numbers are the models' own "
        "speed, not massgen's overhead.",
        "### Speed (tokens/s after the first token; one thread per context)",
        report.table(
            [
                "model",
                "1 agent",
                "2 at once: each / total",
                "3 at once: each / total",
                "1 agent, 2 threads",
            ],
            [
                (
                    s["model"].name,
                    f"{s['speed'][1][0]:.1f}",
                    f"{s['speed'][2][0]:.1f} / {s['speed'][2][1]:.1f}",
                    f"{s['speed'][3][0]:.1f} / {s['speed'][3][1]:.1f}",
                    f"{s['two_threads']:.1f}",
                )
                for s in sections
            ],
        ),
        "A third agent on 2 cores waits for a free core (`local.CPU_SLOTS`): the total stays "
        "that of two.",
        "### Accuracy (temperature 0; right / asked, seconds per question)",
        report.table(
            ["model", "facts, one call", "math, one call", "facts, team of 3", "math, team of 3"],
            [(s["model"].name, *_scores(s["single"]), *_scores(s["team"])) for s in sections],
        ),
        f"Teams: three agents of that model (temperatures 0, 0.4, 0.8), each answering once, "
        f"then voting; the first {team_limit} questions of each set. Questions: "
        "`bench/local_questions.py`.",
    ]
    return "\n\n".join(parts)


def _load() -> float:
    import os

    return os.getloadavg()[0]


def _scores(scores: dict[str, tuple[int, int, float]] | None) -> tuple[str, str]:
    if scores is None:
        return ("not run", "not run")
    return tuple(f"{c}/{n} ({s:.1f} s)" for c, n, s in (scores["facts"], scores["math"]))  # type: ignore[return-value]


if __name__ == "__main__":
    raise SystemExit(main())
