"""`docs/benchmarks.md` from the measurements: targets first, then each benchmark."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bench import commands, journal, report
from bench.commands import TeamSample
from bench.report import count, median, megabytes, ratio, seconds, shown, spread, table
from bench.serve import ANSWER_CHARS

if TYPE_CHECKING:
    from bench.run import CliResults, Results

SPREAD = ["median", "min", "max"]


def render(r: Results) -> str:
    today = datetime.date.today().isoformat()
    parts = [
        "# Benchmarks",
        f"Written by `python -m bench` on {today}; do not edit by hand, rerun it. "
        "Every LLM call goes to the loopback fake provider (`massgen.testing.fake_provider`), "
        "run in its own process, so these numbers are massgen's own cost.",
        "## Machine",
        report.machine(r.runs, r.load),
        "## Targets",
        _targets(r),
        _cold_start(r),
        _coordination(r),
        _scaling(r),
        _prompt_growth(r),
        _events(r),
        _tool_round_trip(r),
        _mcp_startup(r),
        workspace_cost(r),
        journal.section(r.journal),
        _comparison(r),
        _method(),
    ]
    return "\n\n".join(parts) + "\n"


# --- targets -----------------------------------------------------------------------------


def _targets(r: Results) -> str:
    rows = [(name, value, "pass" if ok else "**FAIL**") for name, value, ok in targets(r)]
    return table(["target", "measured (medians)", "result"], rows)


def targets(r: Results) -> list[tuple[str, str, bool]]:
    help_ = median(s.wall for s in r.ours.cold["--help"])
    floor = median(s.wall for s in r.ours.cold["floor"])
    after = median(s.after_first_call for s in r.ours.instant[3])
    first = {n: median(s.first_round for s in r.scaling[n]) for n in (1, 8)}
    per_round = {n: _per_round(r.scaling[n]) for n in (1, 8)}
    rss = max(s.process.rss_mb for s in r.ours.instant[3])
    growth = _bound_ratio(r.ours.instant[8]) / _bound_ratio(r.ours.instant[2])
    return [
        ("`massgen --help` under 0.2 s", seconds(help_), help_ < 0.2),
        ("`--help` within 3x of `python -c pass`", ratio(help_ / floor), help_ <= 3 * floor),
        (
            "3-agent run at 0 ms under 0.5 s on top of startup (from the first LLM call to exit)",
            seconds(after),
            after < 0.5,
        ),
        (
            "8 agents at 300 ms within 1.3x of 1 agent per round: first round",
            ratio(first[8] / first[1]),
            first[8] <= 1.3 * first[1],
        ),
        (
            "… and whole run per round",
            ratio(per_round[8] / per_round[1]),
            per_round[8] <= 1.3 * per_round[1],
        ),
        ("peak RSS of a 3-agent run under 80 MB (max of runs)", megabytes(rss), rss < 80),
        (
            "prompt characters grow no faster than the lower bound "
            "(measured/bound at 8 agents within 10% of 2 agents)",
            ratio(growth),
            growth <= 1.1,
        ),
    ]


def _run_overhead(cli: CliResults) -> float:
    """A 3-agent run at 0 ms minus `--validate`: startup without the provider SDK."""
    run = median(s.process.wall for s in cli.instant[3])
    return run - median(s.wall for s in cli.cold["--validate"])


def _per_round(samples: Sequence) -> float:
    return median(s.wall / s.waves for s in samples)


# --- sections ----------------------------------------------------------------------------


def _cold_start(r: Results) -> str:
    ours = r.ours
    floor = median(s.wall for s in ours.cold["floor"])
    rows = []
    for label, samples in ours.cold.items():
        target = [ours.cli.validate or ""] if label == "--validate" else []
        argv = commands.floor_argv() if label == "floor" else [*ours.cli.argv, label, *target]
        rows.append(_cold_row(label, argv, samples, floor))
    headers = [
        "",
        "command",
        *(f"wall {h}" for h in SPREAD),
        "vs floor",
        *(f"peak RSS {h}" for h in SPREAD),
    ]
    return "\n\n".join(
        [
            "## 1. Cold start",
            "Each command in a fresh process, the three taking turns; `python -c pass` with "
            "the same interpreter is the floor no Python CLI can beat.",
            table(headers, rows),
        ]
    )


def _cold_row(label: str, argv: Sequence[str], samples: list, floor: float) -> list[str]:
    walls, rss = [s.wall for s in samples], [s.rss_mb for s in samples]
    versus = ratio(median(walls) / floor)
    return [label, shown(argv), *spread(walls, seconds), versus, *spread(rss, megabytes)]


def _coordination(r: Results) -> str:
    samples = r.ours.instant[3]
    validate = [s.wall for s in r.ours.cold["--validate"]]
    rows = [
        ["wall time", *spread([s.process.wall for s in samples], seconds)],
        ["startup: spawn until the first LLM call", *spread(_to_first(samples), seconds)],
        ["… compare: `--validate` alone (above)", *spread(validate, seconds)],
        ["… compare: importing the openai SDK alone", seconds(r.backend_import), "", ""],
        ["**run on top of startup: first LLM call to exit**", *spread(_after(samples), seconds)],
        ["wall minus `--validate` (medians)", seconds(_run_overhead(r.ours)), "", ""],
        ["LLM calls", *spread([s.requests.calls for s in samples], count)],
        ["prompt characters sent", *spread([s.requests.prompt_chars for s in samples], count)],
        ["peak RSS", *spread([s.process.rss_mb for s in samples], megabytes)],
    ]
    config = "team3.yaml"
    command = shown([*r.ours.cli.argv, "--config", config, "--no-display", "--no-logs", "…"])
    return "\n\n".join(
        [
            "## 2. Coordination overhead",
            f"A full 3-agent run (answers, votes, final presentation) at 0 ms latency: "
            f"{command}, where `{config}` is three `chatcompletion` agents on the fake server "
            f"(each its own model name, so their answers differ). Answers are {ANSWER_CHARS} "
            "characters. **Startup** is everything before the first LLM request reaches the "
            "server (interpreter, package, config, the provider SDK, its clients); the run on "
            "top of it is everything after (answers, votes, presentation, output, exit). The "
            "split is exact: the launcher and the fake server read the same monotonic clock. "
            "`--validate` does not import provider SDKs, so wall minus `--validate` also "
            "counts the SDK's import, measured apart as `import massgen.api, "
            "massgen.backends.chat_completions` minus `import massgen.api` in fresh processes.",
            table(["", *SPREAD], rows),
        ]
    )


def _to_first(samples: Sequence) -> list[float]:
    return [s.to_first_call for s in samples]


def _after(samples: Sequence) -> list[float]:
    return [s.after_first_call for s in samples]


def _scaling(r: Results) -> str:
    one = r.scaling[1]
    base_first, base_round = median(s.first_round for s in one), _per_round(one)
    rows = []
    for size, samples in r.scaling.items():
        first = [s.first_round for s in samples]
        rows.append(
            [
                str(size),
                *spread(first, seconds),
                ratio(median(first) / base_first),
                seconds(median(s.wall for s in samples)),
                count(median(s.calls for s in samples)),
                count(median(s.waves for s in samples)),
                seconds(_per_round(samples)),
                ratio(_per_round(samples) / base_round),
            ]
        )
    headers = [
        "agents",
        *(f"first round {h}" for h in SPREAD),
        "vs 1 agent",
        "whole run",
        "LLM calls",
        "rounds",
        "whole run per round",
        "vs 1 agent",
    ]
    return "\n\n".join(
        [
            f"## 3. Parallel scaling ({r.latency * 1000:.0f} ms per call)",
            "Through the Python API (`TeamRun`), every call answered after the latency. "
            "**First round**: from the run's start until every agent's first answer is "
            "published; each agent makes exactly one call in it, all concurrently. "
            "**Whole run per round**: the whole run's wall time (building the team's clients, "
            "answers, votes, presentation) divided by its rounds, the waves of calls the "
            "server saw one after another (arrivals less than half a latency apart are one "
            "wave). A single agent has one round; a team has three (answer, vote, present).",
            table(headers, rows),
        ]
    )


def _prompt_growth(r: Results) -> str:
    rows = []
    for size, samples in r.ours.instant.items():
        chars = [s.requests.prompt_chars for s in samples]
        bound = lower_bound(size, _base_prompt(samples[0]))
        rows.append(
            [
                str(size),
                count(median(s.requests.calls for s in samples)),
                count(median(s.requests.calls for s in samples) - (2 * size + 1)),
                *spread(chars, count),
                count(bound),
                ratio(median(chars) / bound),
            ]
        )
    headers = [
        "agents",
        "LLM calls",
        "beyond 2n+1",
        *(f"prompt chars {h}" for h in SPREAD),
        "lower bound",
    ]
    return "\n\n".join(
        [
            "## 4. Prompt growth",
            "The same scripted run for each team size, at 0 ms: every agent answers once "
            f"({ANSWER_CHARS} characters), then votes; the winner presents. **Lower bound**: "
            "each agent sees the others' latest answers once per round: "
            "`n·p` (answers) + `n·(p + (n-1)·a)` (votes) + `(p + n·a)` (presentation), with "
            "`a` the answer length and `p` the smallest prompt of the run (instructions and "
            "question). Characters count message content and tool-call arguments. "
            "The scripted run needs `2n+1` calls (an answer and a vote each, one "
            "presentation); calls beyond that are runs restarted because new answers "
            "arrived while they were under way.",
            table([*headers, "measured / bound"], rows),
        ]
    )


def lower_bound(size: int, base: int) -> int:
    a = ANSWER_CHARS
    return size * base + size * (base + (size - 1) * a) + (base + size * a)


def _base_prompt(sample: TeamSample) -> int:
    return min(chars for _, _, chars in sample.requests.seen)


def _bound_ratio(samples: list[TeamSample]) -> float:
    size = len({model for _, model, _ in samples[0].requests.seen})
    chars = median(s.requests.prompt_chars for s in samples)
    return chars / lower_bound(size, _base_prompt(samples[0]))


def _events(r: Results) -> str:
    rows = []
    for path, by_consumer in r.events.items():
        for consumer, samples in by_consumer.items():
            per_second = [s.per_second for s in samples]
            events = count(median(s.events for s in samples))
            rows.append([path, consumer, events, *spread(per_second, count)])
    headers = ["path", "consumer", "events per run", *(f"events/s {h}" for h in SPREAD)]
    return "\n\n".join(
        [
            "## 5. Event throughput",
            f"A 3-agent run at 0 ms where every reply streams {r.stream_words} words (one "
            "SSE chunk each) before its action. **End to end**: events per second out of "
            "`massgen.stream()` into the consumer, so it includes the fake server, the "
            "openai SDK and the orchestrator. **Consumer alone**: the same events replayed "
            "into a fresh consumer, which shows what the consumer itself can take. The live "
            "view redraws at most 8 times a second whatever the event rate, so its cost per "
            "event is mostly folding the event into the view model.",
            table(headers, rows),
        ]
    )


def _tool_round_trip(r: Results) -> str:
    if not r.tools:
        return ""
    steps = {
        "first model call (a new connection)": [s.model_call for s in r.tools],
        "tool dispatch (events, timeout, result cap)": [s.dispatch for s in r.tools],
        "tool round trip (dispatch + the next call)": [s.round_trip for s in r.tools],
    }
    rows = [[name, *spread(values, _ms)] for name, values in steps.items()]
    return "\n\n".join(
        [
            "## 6. One tool round trip",
            f"One agent calls an in-process tool once, then answers ({len(r.tools)} runs). The "
            "fake provider runs in this process here, since its reply depends on the request. "
            "The round trip runs from the model's tool call to the end of the reply that reads "
            "its result, so it holds one more model call (on the open connection).",
            table(["step", *(f"ms {h}" for h in SPREAD)], rows),
        ]
    )


def _mcp_startup(r: Results) -> str:
    if not r.mcp:
        return ""
    from bench.inproc import MCP_AGENTS, MCP_SERVERS, MCP_TURNS

    servers = MCP_AGENTS * len(MCP_SERVERS)
    session = [sum(s.session_turns) for s in r.mcp]
    rows = [
        [
            "session start-up (every server started and listed)",
            *spread([s.open_s for s in r.mcp], _ms),
        ],
        [f"session: {MCP_TURNS} turns", *spread(session, _ms)],
        ["session end (every server closed)", *spread([s.close_s for s in r.mcp], _ms)],
        [f"separate runs: {MCP_TURNS} runs", *spread([sum(s.run_turns) for s in r.mcp], _ms)],
        ["one turn without MCP servers", *spread([s.bare_turn for s in r.mcp], _ms)],
    ]
    starts = sorted({(s.session_starts, s.run_starts) for s in r.mcp})
    counted = "; ".join(f"{a} in the session, {b} over the separate runs" for a, b in starts)
    return "\n\n".join(
        [
            "## 7. MCP start-up",
            f"{MCP_AGENTS} agents, each with {len(MCP_SERVERS)} stdio servers (the shipped "
            f"`massgen.tools.example_server`, one process per agent and server: {servers}), "
            f"{MCP_TURNS} turns ({len(r.mcp)} sample(s)). A chat session opens the servers once and "
            "hands them to every turn; a run on its own opens and closes its own. Server "
            f"processes started: {counted}.",
            table(["step", *(f"ms {h}" for h in SPREAD)], rows),
        ]
    )


def workspace_cost(r: Results) -> str:
    cost = r.workspace
    if cost is None:
        return ""
    rows = [
        [
            s.step,
            _ms(max(s.seconds)),
            _ms(sum(s.seconds)),
            f"{s.files_read:,}",
            f"{s.store_bytes / 2**20:.1f}",
        ]
        for s in cost.steps
    ]
    rows.append(
        [
            f"one viewer reads all {len(cost.steps) * cost.agents} snapshots",
            _ms(cost.view_seconds),
            _ms(cost.view_seconds),
            "0",
            f"copied for views: {cost.copied_for_views}",
        ]
    )
    return "\n\n".join(
        [
            "## 8. Workspace snapshots and peer views",
            f"{cost.agents} agents, each with the same {cost.files:,} files "
            f"({cost.total_bytes / 2**20:.0f} MB), publish three answers; then "
            f"{cost.changed} files of each change. Files hashed follow what changed, not "
            "agents x files; an unchanged file is stored once across agents and rounds, and "
            "peers read snapshots from the store (nothing is copied per viewer).",
            table(["step", "ms per agent (max)", "ms all agents", "files read", "store MB"], rows),
        ]
    )


def _ms(value: float) -> str:
    return f"{value * 1000:.2f}"


def _comparison(r: Results) -> str:
    title = "## Side by side with another orchestrator"
    if r.other is None:
        return (
            f"{title}\n\nNot run: `MASSGEN_BENCH_OTHER_CLI` was not set. Point it at another "
            "installed massgen-style CLI (for example the predecessor, PyPI `massgen`, in its "
            "own virtual environment) and the command workloads above run against both."
        )
    ours, theirs = r.ours, r.other
    rows = _cold_comparison(ours, theirs) + _team_comparison(ours, theirs)
    headers = ["workload", "metric", ours.cli.name, theirs.cli.name, "ratio (other / this)"]
    return "\n\n".join(
        [
            title,
            f"The other CLI is {shown(theirs.cli.argv)} ({theirs.cli.name}), run "
            f"{_times(theirs.runs)} per workload; this massgen {_times(ours.runs)}; medians. "
            "Both get the same fake server, policy, team configs and question, through the "
            "same command line (`--config FILE --no-display --no-logs QUESTION`). The "
            "300 ms rows run this massgen through its CLI too, so both include startup. "
            "`--validate` checks the generated 3-agent file for the other CLI, the "
            "equivalent preset for this one.",
            table(headers, rows),
            _other_failures(theirs),
        ]
    ).rstrip()


def _times(n: int) -> str:
    return f"{n} time{'s' if n != 1 else ''}"


def _cold_comparison(ours: CliResults, theirs: CliResults) -> list[list[str]]:
    rows = []
    for label in ("--help", "--validate"):
        a, b = ours.cold[label], theirs.cold[label]
        rows.append(
            _versus(f"`{label}`", "wall", [s.wall for s in a], [s.wall for s in b], seconds)
        )
        rows.append(
            _versus(
                f"`{label}`", "peak RSS", [s.rss_mb for s in a], [s.rss_mb for s in b], megabytes
            )
        )
    return rows


def _team_comparison(ours: CliResults, theirs: CliResults) -> list[list[str]]:
    rows = []
    pairs = (("0 ms", ours.instant, theirs.instant), ("300 ms", ours.slow, theirs.slow))
    for latency, a_runs, b_runs in pairs:
        for size in a_runs or {}:
            a = a_runs[size]
            b = [s for s in (b_runs or {}).get(size, []) if s.process.code == 0]
            label = f"{size} agent{'s' if size > 1 else ''}, {latency}"
            metrics = [
                ("wall", lambda s: s.process.wall, seconds),
                ("spawn to first LLM call", lambda s: s.to_first_call, seconds),
                ("first LLM call to exit", lambda s: s.after_first_call, seconds),
                ("LLM calls", lambda s: s.requests.calls, count),
                ("prompt chars", lambda s: s.requests.prompt_chars, count),
                ("peak RSS", lambda s: s.process.rss_mb, megabytes),
            ]
            for name, get, fmt in metrics:
                rows.append(_versus(label, name, [get(s) for s in a], [get(s) for s in b], fmt))
    return rows


def _versus(workload: str, metric: str, a: list[float], b: list[float], fmt) -> list[str]:
    if not b:
        return [workload, metric, fmt(median(a)), "failed", "–"]
    ma, mb = median(a), median(b)
    return [workload, metric, fmt(ma), fmt(mb), ratio(mb / ma) if ma else "–"]


def _other_failures(theirs: CliResults) -> str:
    samples = [s for runs in (theirs.instant, theirs.slow or {}) for v in runs.values() for s in v]
    samples += [s for v in theirs.cold.values() for s in v]
    failed = commands.failures(samples)
    if not failed:
        return ""
    return (
        f"{len(failed)} run(s) of the other CLI failed; the first ended:\n\n```\n{failed[0]}\n```"
    )


def _method() -> str:
    return "\n".join(
        [
            "## How it is measured",
            "",
            "- Commands run through `bench/spawn.py`, a small launcher that forks, execs and "
            "`wait4`s the command: wall time is fork to exit, peak RSS is the command's own "
            "`ru_maxrss`. (Started directly from the bench, a child's peak RSS would include "
            "the bench's memory, because Python starts children with vfork.)",
            "- Commands run in a scratch directory that is also `HOME`, with `--no-logs` and "
            "`--no-display` (plain text), so no user settings or `.env` files are read.",
            "- The fake provider runs in a separate process (`bench/serve.py`) and records "
            "each request's arrival (on the monotonic clock the launcher also reads), model and "
            "prompt characters. Its policy answers until "
            "the agent's own answer is in view, then votes; the presentation gets plain text.",
            "- Medians, minima and maxima are over the runs stated under Machine.",
        ]
    )
