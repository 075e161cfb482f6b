"""`python -m bench.cli_members`: what a coding-agent CLI member costs a turn over an API
member of the same fake model.

Each member is a one-member team that answers through `new_answer` at once, against its
own loopback fake of its vendor's API (the fakes the tests use, in this process):

    type: claude_code (Claude Code, bundled by claude-agent-sdk)   vs  type: claude
    type: codex       (Codex's app server, npm @openai/codex)      vs  type: openai
    type: gemini_cli  (Gemini CLI over ACP, npm @google/gemini-cli) vs type: gemini

A CLI that is not installed is left out (and named). One warm-up run each, then `--runs`
runs, the members taking turns so that the machine's other work weighs on each alike.
Measured per run, on one clock (`children.now()`): the run (`TeamRun.execute()`), the
CLI's processes (`children.ChildWatch`: start, end, peak RSS), the fake's requests (when
each reached the policy) and the answer's `AnswerPublished`. Written into its section of
`docs/benchmarks.md`; `--print` for a look. Run it at a raised priority when the machine
is shared (`nice -n -10`): the output says the niceness and load it ran at.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import report
from bench.children import SETTLE, ChildWatch, now
from massgen.backends import codex_tools
from massgen.testing import Reply, coding_agent, cooperative_agent
from massgen.testing import fake_gemini as gemini_fakes
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_gemini import FakeGemini
from massgen.testing.fake_openai_responses import FakeResponses

BEGIN, END = "<!-- cli members: begin -->", "<!-- cli members: end -->"
_say = report.progress("bench.cli_members")
QUESTION = "What is the capital of France?"
KEY = "sk-fake"
CC_PREFIX = "mcp__massgen__"  # massgen's actions, as Claude Code names them
SCHEMA_AT = "matches this JSON schema:\n"  # where Gemini CLI's prompt gives the action's
LARGE_MB = 20  # a child process named in the memory column
TURN_SECONDS = 120  # one turn's bound; a turn here takes seconds


@dataclass(frozen=True, slots=True)
class Pair:
    """A CLI member type and the API member of the same vendor's fake model."""

    cli: str
    api: str
    model: str
    fake: Callable[..., Any]
    cli_policy: Callable[[], Callable[[dict[str, Any]], Reply]]
    api_policy: Callable[[dict[str, Any]], Reply]


def _gemini_cli_answer(request: dict[str, Any]) -> Reply:
    """A model inside Gemini CLI that ends its turn at once with the JSON action massgen's
    prompt asks for (as `tests/backends/test_gemini_cli.py`'s does after its calls)."""
    parts = [p for c in request.get("contents") or [] for p in c.get("parts") or []]
    prompts = [str(p["text"]) for p in parts if SCHEMA_AT in str(p.get("text", ""))]
    if not prompts:
        return Reply(text="Paris.", finish_reason="stop")
    schema = json.loads(prompts[-1].split(SCHEMA_AT, 1)[1])
    options = [
        o
        for o in schema.get("anyOf") or [schema]
        if o["properties"]["action"].get("const") != "tool"
    ]
    chosen = options[0] if len(options) == 1 else {"anyOf": options}
    chat = {
        "model": "gemini-cli-fake",
        "messages": [{"role": "user", "content": prompts[-1]}],
        "response_format": {"type": "json_schema", "json_schema": {"schema": chosen}},
    }
    return Reply(text=cooperative_agent(chat).text, finish_reason="stop")


PAIRS = (
    Pair("claude_code", "claude", "claude-sonnet-4-5", FakeAnthropic,
         lambda: coding_agent(prefix=CC_PREFIX), cooperative_agent),
    Pair("codex", "openai", "gpt-5.1-codex", FakeResponses, coding_agent, cooperative_agent),
    Pair("gemini_cli", "gemini", "gemini-2.5-flash", FakeGemini,
         lambda: _gemini_cli_answer, gemini_fakes.cooperative_agent),
)  # fmt: skip


def installed(cli: str) -> str | None:
    """The CLI's version if it is installed, else None."""
    if cli == "claude_code":
        if importlib.util.find_spec("claude_agent_sdk") is None:
            return None
        import claude_agent_sdk

        bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude.version"
        cli_version = bundled.read_text().split()[0] if bundled.is_file() else "?"
        sdk = importlib.metadata.version("claude-agent-sdk")
        return f"Claude Code {cli_version} (claude-agent-sdk {sdk})"
    path = codex_tools.find_cli(None, os.environ) if cli == "codex" else shutil.which("gemini")
    if path is None:
        return None
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
    name = "Codex" if cli == "codex" else "Gemini CLI"
    return f"{name} {out.stdout.strip().split()[-1] if out.stdout.strip() else '?'}"


@dataclass(slots=True)
class Sample:
    """One run, in seconds from its start (None where it has no such moment)."""

    run: float
    spawned: float | None  # the first child process started
    first_request: float
    last_request: float
    ended: float | None  # the last child process ended
    answered: float  # AnswerPublished
    peak_mb: float  # the children's peak RSS together (`ChildWatch.peak_mb`)
    large: tuple[str, ...]  # the names of the children of LARGE_MB or more, largest first
    processes: int  # how many child processes it started
    left: tuple[str, ...]  # children still running SETTLE seconds after the run


@dataclass(slots=True)
class Member:
    kind: str
    loaded: Any
    seen: list[float] = field(default_factory=list)  # when each request reached the fake

    async def run(self) -> Sample:
        from massgen import api
        from massgen.core import events as ev

        self.seen.clear()
        answered: list[float] = []

        def sink(event: object) -> None:
            if isinstance(event, ev.AnswerPublished):
                answered.append(now())

        with ChildWatch() as watch:
            start = now()
            result = await api.TeamRun(self.loaded, QUESTION, sinks=[sink], logs=False).execute()
            run = now() - start
        if not result.ok or not answered or not self.seen:
            raise RuntimeError(f"the {self.kind} member did not answer: {result}")
        first, last = watch.first_start, watch.last_end
        return Sample(
            run=run,
            spawned=None if first is None else first - start,
            first_request=self.seen[0] - start,
            last_request=self.seen[-1] - start,
            ended=None if last is None else last - start,
            answered=answered[0] - start,
            peak_mb=watch.peak_mb,
            large=tuple(
                dict.fromkeys(
                    c.name
                    for c in sorted(watch.children.values(), key=lambda c: -c.peak_kb)
                    if c.peak_kb >= LARGE_MB * 1024
                )
            ),
            processes=len(watch.children),
            left=tuple(c.name for c in watch.children.values() if c.ended is None),
        )


def _large(watch: ChildWatch) -> tuple[str, ...]:
    """The names of the children of LARGE_MB or more, the largest first."""
    by_size = sorted(watch.children.values(), key=lambda c: -c.peak_kb)
    return tuple(dict.fromkeys(c.name for c in by_size if c.peak_kb >= LARGE_MB * 1024))


def _timed(policy: Callable[[dict[str, Any]], Reply], seen: list[float]) -> Callable:
    def agent(request: dict[str, Any]) -> Reply:
        seen.append(now())
        return policy(request)

    return agent


def _backend(kind: str, model: str, base_url: str) -> dict[str, Any]:
    backend = {"type": kind, "model": model, "base_url": base_url, "api_key": KEY}
    if kind in ("claude_code", "codex", "gemini_cli"):
        backend |= {"cwd": f"{kind}_ws", "request_timeout_seconds": TURN_SECONDS}
    return backend


async def _measure(pairs: list[Pair], runs: int) -> dict[str, list[Sample]]:
    from massgen import api

    members: list[Member] = []
    with _Fakes() as fakes:
        for pair in pairs:
            for kind, policy in ((pair.api, pair.api_policy), (pair.cli, pair.cli_policy())):
                seen: list[float] = []
                fake = fakes.start(pair.fake(_timed(policy, seen)))
                config = {
                    "agents": [{"id": kind, "backend": _backend(kind, pair.model, fake.base_url)}]
                }
                members.append(Member(kind, api.load(config), seen))
        samples: dict[str, list[Sample]] = {m.kind: [] for m in members}
        for round_ in range(runs + 1):  # the first round warms up, and is dropped
            for member in members:
                _say(f"round {round_}: {member.kind}")
                sample = await member.run()
                if round_:
                    samples[member.kind].append(sample)
        return samples


class _Fakes:
    """The fakes started for the measurement, stopped at its end."""

    def __init__(self) -> None:
        self._started: list[Any] = []

    def start(self, fake: Any) -> Any:
        self._started.append(fake.__enter__())
        return fake

    def __enter__(self) -> _Fakes:
        return self

    def __exit__(self, *exc: object) -> None:
        for fake in reversed(self._started):
            fake.__exit__(*exc)


def measure(pairs: list[Pair], runs: int) -> dict[str, list[Sample]]:
    """Every member's samples, run in a scratch folder that is also HOME (not under /tmp:
    Codex will not set up its sandbox there), so no user's CLI state is read or written."""
    scratch_root = codex_tools.cache_dir(os.environ)
    scratch_root.mkdir(parents=True, exist_ok=True)
    home, cwd = os.environ.get("HOME"), os.getcwd()
    with tempfile.TemporaryDirectory(prefix="bench-cli-", dir=scratch_root) as scratch:
        os.environ["HOME"] = str(Path(scratch) / "home")
        Path(os.environ["HOME"]).mkdir()
        os.chdir(scratch)
        try:
            return asyncio.run(_measure(pairs, runs))
        finally:
            os.chdir(cwd)
            if home is not None:
                os.environ["HOME"] = home


# --- the section ---------------------------------------------------------------------------


def _median(samples: list[Sample], get: Callable[[Sample], float | None]) -> float | None:
    values = [v for s in samples if (v := get(s)) is not None]
    return statistics.median(values) if len(values) == len(samples) else None


def _s(value: float | None) -> str:
    """Seconds; a phase below zero is within the clocks' steps, shown as 0."""
    return "–" if value is None else f"{max(value, 0.0):.2f} s"


PHASES: tuple[tuple[str, Callable[[Sample], float | None]], ...] = (
    ("run start → process start", lambda s: s.spawned),
    ("→ first request", lambda s: s.first_request - (s.spawned or 0.0)),
    ("first → last request", lambda s: s.last_request - s.first_request),
    (
        "last request → processes ended",
        lambda s: None if s.ended is None else s.ended - s.last_request,
    ),
    (
        "→ answer published",
        lambda s: s.answered - (s.ended if s.ended is not None else s.last_request),
    ),
)


def rows(pairs: list[Pair], samples: dict[str, list[Sample]]) -> list[str]:
    out = []
    for pair in pairs:
        base = statistics.median(s.run for s in samples[pair.api])
        for kind in (pair.api, pair.cli):
            got = samples[kind]
            run = statistics.median(s.run for s in got)
            over = "" if kind == pair.api else f"+{run - base:.2f} s"
            phases = [_s(_median(got, get)) for _, get in PHASES]
            cells = [f"`{kind}`", _s(run), _s(min(s.run for s in got)), over, *phases]
            cells.append(_memory(got))
            out.append("| " + " | ".join(cells) + " |")
    return out


def _memory(got: list[Sample]) -> str:
    if not got[0].processes:
        return "none"
    mb = statistics.median(s.peak_mb for s in got)
    processes = statistics.median(s.processes for s in got)
    plural = "" if processes == 1 else "es"
    return f"{mb:.0f} MB ({', '.join(got[0].large)}; {processes:.0f} process{plural} a turn)"


def where(pairs: list[Pair], samples: dict[str, list[Sample]]) -> str:
    """Where each CLI member's added time goes, from the medians."""
    parts = []
    for pair in pairs:
        got, base = samples[pair.cli], samples[pair.api]
        over = statistics.median(s.run for s in got) - statistics.median(s.run for s in base)
        start = _median(got, PHASES[1][1]) or 0.0
        teardown = _median(got, PHASES[3][1])
        stop = "" if teardown is None else f", {max(teardown, 0.0):.2f} s its end"
        share = f" ({start / over:.0%})" if over > 0 else ""
        parts.append(
            f"`{pair.cli}` +{over:.2f} s, of which {start:.2f} s{share} from its process "
            f"start to its first request{stop}"
        )
    return "; ".join(parts)


def _left(samples: dict[str, list[Sample]]) -> str:
    """Which runs left a process running SETTLE seconds after them (a `–` above)."""
    left = [f"{kind} ({', '.join(s.left)})" for kind, got in samples.items() for s in got if s.left]
    if not left:
        return f" No run left a process running {SETTLE:g} s after it."
    return f" Runs that left a process running {SETTLE:g} s after them: {'; '.join(left)}."


def render(
    pairs: list[Pair],
    versions: dict[str, str],
    samples: dict[str, list[Sample]],
    runs: int,
    load: tuple[float, float],
    missing: list[str],
) -> str:
    headers = [
        "member",
        "run median",
        "min",
        "over the API member",
        *(name for name, _ in PHASES),
        "peak RSS of its processes",
    ]
    table = "\n".join(
        ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers), *rows(pairs, samples)]
    )
    used = "; ".join(versions[p.cli] for p in pairs)
    left_out = f" Not installed, so not measured: {', '.join(missing)}." if missing else ""
    return "\n\n".join(
        [
            "## 18. Coding-agent CLI members",
            f"Written by `python -m bench.cli_members` on {time.strftime('%Y-%m-%d')}: a "
            "one-member team that answers through `new_answer` at once, each member on its "
            "own loopback fake of its vendor's API in the bench's process (the tests' fakes, "
            "0 ms latency), the CLI member against the API member of the same fake model; "
            f"one warm-up run each, then {runs} runs, the members taking turns. {used}."
            f"{left_out} Run at nice {os.nice(0)}; 1-minute load average {load[0]:.2f} "
            f"before, {load[1]:.2f} after, on the 2-core machine above, shared with other "
            "work (other sessions' tests, a model batch) while this ran.",
            "The phases are medians, each from one moment of a run to the next: the CLI's "
            "first process starting (the kernel's start time, 10 ms steps), the fake "
            "receiving its first request (the first event of the CLI that massgen can see; "
            "the views show little of a member that answers at once before its "
            "answer) and its last request (Claude Code makes two: the action, "
            "then its turn's end after reading `Recorded`), the CLI's last process ending "
            "(its pidfd), and the answer on the board (`AnswerPublished`). For an API "
            "member the first request is counted from the run's start and the answer from "
            "its last request. Peak RSS: at each 10 ms poll, the high-water marks (`VmHWM`) "
            "of the CLI's processes alive then, summed; the largest sum, median of the runs; "
            f"its processes of {LARGE_MB} MB or more named, the largest first, and how many "
            "processes a turn started (shells, git and sandbox helpers among them).",
            table,
            "Where the time goes: " + where(pairs, samples) + ". Every turn of a CLI member "
            "starts the CLI afresh (its runtime, its config and login, the protocol's "
            "handshake and a new session or thread, its own prompt), waits for the model, "
            "and stops it with everything it started; an API member's turn is one request "
            "on a client that is already up." + _left(samples),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cli_members")
    parser.add_argument("--runs", type=int, default=5, help="runs per member (default 5)")
    parser.add_argument("--print", action="store_true", help="print the section, do not write it")
    args = parser.parse_args(argv)
    versions = {p.cli: v for p in PAIRS if (v := installed(p.cli)) is not None}
    pairs = [p for p in PAIRS if p.cli in versions]
    missing = [p.cli for p in PAIRS if p.cli not in versions]
    if not pairs:
        _say("no coding-agent CLI is installed: nothing to measure")
        return 1
    load_before = os.getloadavg()[0]
    samples = measure(pairs, args.runs)
    for kind, got in samples.items():
        _say(f"{kind}: " + "; ".join(f"{s.run:.2f}s" for s in got))
    section = render(
        pairs, versions, samples, args.runs, (load_before, os.getloadavg()[0]), missing
    )
    report.publish(section, BEGIN, END, quick=args.print)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
