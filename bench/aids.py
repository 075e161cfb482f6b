"""`python -m bench.aids`: what the coordination aids cost, written into the aids section of
`docs/benchmarks.md` (between its markers; `python -m bench` keeps the section).

    python -m bench.aids              # 5 runs of each measurement
    python -m bench.aids --quick      # 2 runs each, printed instead of written

Each aid through the code a real run calls: skill discovery (`tools/skills.py`), the
memory section (`TeamMemory.note`), 3-agent `TeamRun`s with personas, criteria and paraphrases on and
off, one `spawn_subagents` call and one `ask_others` question, every LLM call answered at
once by the loopback fake provider (`massgen.testing`), which runs in this process here
because its replies depend on the request (the generation calls get JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import report
from bench.commands import QUESTION
from bench.proc import ROOT
from bench.serve import Policy
from massgen import api
from massgen.core import events as ev
from massgen.testing import FakeProvider, Reply, prompt_chars

BEGIN, END = "<!-- coordination aids: begin -->", "<!-- coordination aids: end -->"
SKILL_COUNTS = (8, 64)
AGENTS = 3
IDS = tuple(f"a{n}" for n in range(1, AGENTS + 1))
# The team runs, each a 3-agent run at 0 ms; "none" is the baseline.
RUNS: dict[str, dict[str, Any]] = {
    "none": {},
    "every aid key present, all off": {
        "use_skills": False,
        "enable_memory_filesystem_mode": False,
        "enable_subagents": False,
        "persona_generator": {"enabled": False},
        "evaluation_criteria_generator": {"enabled": False},
        "question_paraphraser": {"enabled": False},
        "enable_changedoc": False,
        "broadcast": False,
    },
    "personas": {"persona_generator": {"enabled": True}},
    "criteria": {"evaluation_criteria_generator": {"enabled": True}},
    "personas + criteria": {
        "persona_generator": {"enabled": True},
        "evaluation_criteria_generator": {"enabled": True},
    },
    "paraphrases": {"question_paraphraser": {"enabled": True}},
}
OFF = "every aid key present, all off"
# What the fake writes when asked: personas of 3-5 sentences, criteria with failure modes.
PERSONA = (
    "You value {lens} above everything else in this task. You look first for where an "
    "answer could mislead a careful reader, and you refuse to trade accuracy for brevity. "
    "You still solve the whole task, end to end, to a complete and polished standard."
)
LENSES = ("historical accuracy", "clear causal reasoning", "concise structure")
CRITERION = (
    "Aspect {n}: the answer states concrete, checkable facts and explains why they hold, "
    "rather than asserting them."
)
CRITERIA = 4
# How the fake rephrases the question, one lead-in per agent.
PARAPHRASE_LEADS = ("Put differently:", "In other words,", "Said another way:")


def main(argv: list[str] | None = None) -> int:
    runs, quick = report.runs_and_quick(
        argv, "python -m bench.aids", 5, 2, "runs", "per measurement"
    )
    load_before = os.getloadavg()[0]
    cost = measure(runs)
    text = render(cost, runs, (load_before, os.getloadavg()[0]), _cli_overhead())
    report.publish(text, BEGIN, END, quick=quick)
    return 0


@dataclass(frozen=True, slots=True)
class AidsCost:
    skills: dict[int, SkillCost]
    memory: dict[str, MemoryCost]
    teams: dict[str, list[TeamSample]]
    subagents: list[SpawnSample]
    broadcast: list[AskSample]


def measure(runs: int) -> AidsCost:
    with tempfile.TemporaryDirectory(prefix="massgen-bench-aids-") as scratch, _inside(scratch):
        base = Path(scratch)
        skills = {n: skill_cost(base / f"skills{n}", n, runs) for n in SKILL_COUNTS}
        memory = {
            name: memory_cost(base / f"mem-{n}", *sizes, runs)
            for n, (name, sizes) in enumerate(MEMORY_CASES.items())
        }
        teams = asyncio.run(team_runs(runs))
        subagents = asyncio.run(spawn_runs(runs))
        broadcast = asyncio.run(ask_runs(runs))
    return AidsCost(skills, memory, teams, subagents, broadcast)


@contextlib.contextmanager
def _inside(directory: str) -> Iterator[None]:
    """Relative workspaces (`cwd: w1`) land in the scratch directory, not the checkout."""
    before = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


# --- skills --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkillCost:
    discover: list[float]  # seconds of `skills.discover` over the folders
    prompt_and_tools: list[float]  # the prompt section and the skill toolbox built
    listed: int
    prompt_chars: int


def skill_cost(project: Path, count: int, runs: int) -> SkillCost:
    """`count` skill folders in the project's skills directory (each a SKILL.md with front
    matter and a 2 KB body, and a file beside it); the user's and bundled sources empty,
    so exactly `count` are found."""
    from massgen.tools import skills

    for n in range(count):
        folder = project / f"skill-{n:02d}"
        (folder / "scripts").mkdir(parents=True)
        description = (
            f"Use for tasks of kind {n}: what to check first, the steps in order, and the "
            "mistakes to avoid when the task looks simpler than it is."
        )
        body = f"# Skill {n}\n\n" + "Do the step, then check it against the task.\n" * 45
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{n:02d}\ndescription: {json.dumps(description)}\n---\n{body}"
        )
        (folder / "scripts" / "check.py").write_text("print('ok')\n")
    empty = project.parent / f"{project.name}-empty"
    empty.mkdir()
    sources = skills.Sources(project=project, user=None, bundled=empty)
    found, built = [], []
    catalog = skills.discover(sources)  # warm: the first scan pays for imports
    for _ in range(runs):
        started = time.perf_counter()
        catalog = skills.discover(sources)
        found.append(time.perf_counter() - started)
        started = time.perf_counter()
        note = skills.prompt_section(catalog)
        skills.SkillToolbox(catalog)
        built.append(time.perf_counter() - started)
    if len(catalog.skills) != count or catalog.warnings:
        raise RuntimeError(f"{count} skills written, {len(catalog.skills)} found: {catalog}")
    return SkillCost(found, built, len(catalog.skills), len(note))


# --- filesystem memory ---------------------------------------------------------------------

# name -> (short-term memories per agent, characters each, long-term per agent)
MEMORY_CASES = {
    "a few each": (3, 600, 2),
    "past the bounds": (100, 4000, 50),
}


@dataclass(frozen=True, slots=True)
class MemoryCost:
    short_term: int  # per agent
    chars_each: int
    long_term: int  # per agent
    seconds: list[float]  # one `note` call: one agent's run, its own and its peers' memories
    note_chars: int  # the largest section built
    bound_chars: int  # MemoryBounds.max_chars: the memories' text shown, at most


def memory_cost(base: Path, short: int, chars: int, long: int, runs: int) -> MemoryCost:
    """Three agents with `short` short-term and `long` long-term memories each, every
    agent's answer published (a snapshot each); then each agent's memory section, seeing
    its two peers' answers, as its next run builds it."""
    from massgen.workspace import memory
    from massgen.workspace.team import Workspaces

    ws = Workspaces(base, "bench", {agent: f"w-{agent}" for agent in IDS})
    labels = {}
    for n, agent in enumerate(IDS, 1):
        root = ws.path(agent)
        for tier, many in ((memory.SHORT_TERM, short), (memory.LONG_TERM, long)):
            folder = root / memory.MEMORY_DIR / tier
            folder.mkdir(parents=True)
            for k in range(many):
                head = f"---\nname: {agent}-{k}\ndescription: what {agent} learnt, {k}\n---\n"
                (folder / f"{agent}-{k}.md").write_text(head + _filler(chars))
        labels[agent] = f"agent{n}.1"
        ws.published(agent, labels[agent])
    team = memory.TeamMemory(ws)  # the default MemoryBounds, as a run without the keys
    seconds, sizes = [], []
    for _ in range(runs):
        for agent in IDS:
            peers = [labels[a] for a in IDS if a != agent]
            started = time.perf_counter()
            note = team.note(agent, peers)
            seconds.append(time.perf_counter() - started)
            sizes.append(len(note or ""))
    return MemoryCost(short, chars, long, seconds, max(sizes), team.bounds.max_chars)


def _filler(chars: int) -> str:
    line = "A finding worth keeping, with the reason it holds and where it applies.\n"
    return (line * (chars // len(line) + 1))[:chars]


# --- personas and criteria: team runs ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TeamSample:
    wall: float  # `TeamRun.execute()`: building the team, generations, answers, votes, final
    preparation: float  # RunStarted -> the first AgentStarted: the generation calls
    calls: int
    generation_calls: int
    agent_chars: int  # prompt characters of every call but the generations'
    generation_chars: int  # prompt characters of the generation calls


def _generation(request: dict[str, Any]) -> str | None:
    messages: list[dict[str, Any]] = request.get("messages") or []
    user = next((m for m in messages if m.get("role") == "user"), {})
    text = str(user.get("content") or "")
    if text.startswith("You are assigning different"):
        return "personas"
    if text.startswith("You are writing the evaluation criteria"):
        return "criteria"
    if text.startswith("You are rephrasing a user's request"):
        return "paraphrases"
    return None


class Generating:
    """`bench.serve.Policy` (answers of 1000 characters, then votes) that also answers the
    persona and criteria generation calls, with JSON of a realistic size."""

    def __init__(self) -> None:
        self.agents = Policy(0)

    def __call__(self, request: dict[str, Any]) -> Reply:
        kind = _generation(request)
        if kind == "personas":
            stems = re.findall(r"^- (agent\d+)", _first_user(request), re.M)
            entries = {
                stem: {"persona_text": PERSONA.format(lens=lens), "summary": lens}
                for stem, lens in zip(stems, LENSES * len(stems), strict=False)
            }
            return Reply(text=json.dumps({"personas": entries}))
        if kind == "criteria":
            items = [
                {
                    "text": CRITERION.format(n=n),
                    "category": "primary" if n == 1 else "standard",
                    "anti_patterns": [f"a vague claim of kind {n}", "an unexplained date"],
                }
                for n in range(1, CRITERIA + 1)
            ]
            aspiration = "an answer a historian would cite"
            return Reply(text=json.dumps({"aspiration": aspiration, "criteria": items}))
        if kind == "paraphrases":
            asked = re.search(r"## The request\n(.*?)\n\n## How", _first_user(request), re.S)
            question = asked.group(1) if asked else QUESTION
            wording = (f"{lead} {question[0].lower()}{question[1:]}" for lead in PARAPHRASE_LEADS)
            return Reply(text=json.dumps({"paraphrases": list(wording)}))
        return self.agents(request)


def _first_user(request: dict[str, Any]) -> str:
    return next(str(m["content"]) for m in request["messages"] if m["role"] == "user")


def team_config(base_url: str, coordination: dict[str, Any]) -> dict[str, Any]:
    backend = {"type": "chatcompletion", "base_url": base_url, "api_key": "bench-key"}
    agents = [{"id": agent, "backend": {**backend, "model": agent}} for agent in IDS]
    orchestrator = {"coordination": coordination} if coordination else {}
    return {"agents": agents, "orchestrator": orchestrator}


async def team_runs(runs: int) -> dict[str, list[TeamSample]]:
    """Every config of `RUNS` in turn, `runs` times (interleaved, so a change in the
    machine's load hits all alike), after one warm-up run of each."""
    samples: dict[str, list[TeamSample]] = {name: [] for name in RUNS}
    with FakeProvider(Generating()) as fake:
        loaded = {name: api.load(team_config(fake.base_url, c)) for name, c in RUNS.items()}
        for name in RUNS:
            await _team_run(fake, loaded[name])
        for _ in range(runs):
            for name in RUNS:
                samples[name].append(await _team_run(fake, loaded[name]))
    return samples


async def _team_run(fake: FakeProvider, loaded: Any) -> TeamSample:
    before = len(fake.requests)
    marks = _Marks()
    started = time.perf_counter()
    result = await api.TeamRun(loaded, QUESTION, sinks=[marks], logs=False).execute()
    wall = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError(f"aids team run ended {result.status}: {result.reason}")
    if ev.GeneratorFailed in marks.first:  # a fallback would measure an aid that never ran
        raise RuntimeError("an aid's generation failed in the bench; its numbers would be wrong")
    requests = list(fake.requests)[before:]
    made = [r for r in requests if _generation(r)]
    return TeamSample(
        wall,
        marks.span(ev.RunStarted, ev.AgentStarted),
        len(requests),
        len(made),
        sum(prompt_chars(r) for r in requests if not _generation(r)),
        sum(prompt_chars(r) for r in made),
    )


# --- subagents -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpawnSample:
    call: float  # ToolCallStarted -> ToolCallFinished of `spawn_subagents`
    child: float  # SubagentStarted -> SubagentFinished: the child's TeamRun
    child_calls: int
    alone: float  # the same child as a TeamRun of its own (one agent, a workspace)


CHILD_TASK = "Find the year the city became the capital."


def _spawner(request: dict[str, Any]) -> Reply:
    """The parent hands out one task, then answers with what came back; the child (its
    system message says it is a subagent) answers at once."""
    from massgen.runs.subagents import SUBAGENT_NOTE

    messages = request.get("messages") or []
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    if SUBAGENT_NOTE in str(messages[0].get("content")) or "spawn_subagents" not in offered:
        if "new_answer" in offered:
            return Reply(tool_calls=[("new_answer", {"content": "It became the capital in 987."})])
        return Reply(text="It became the capital in 987.")
    results = [m["content"] for m in messages if m["role"] == "tool"]
    if not results:
        task = {"task": CHILD_TASK, "subagent_id": "year"}
        return Reply(tool_calls=[("spawn_subagents", {"tasks": [task]})])
    return Reply(tool_calls=[("new_answer", {"content": f"From the subagent: {results[-1]}"})])


async def spawn_runs(runs: int) -> list[SpawnSample]:
    with FakeProvider(_spawner) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "api_key": "bench-key"}
        parent = {
            "agents": [{"id": "lead", "backend": {**backend, "model": "m", "cwd": "lead"}}],
            "orchestrator": {"coordination": {"enable_subagents": True}},
        }
        from massgen.runs.subagents import SUBAGENT_NOTE

        child = {
            "agents": [
                {
                    "id": "lead.year",
                    "backend": {**backend, "model": "m", "cwd": "alone"},
                    "system_message": SUBAGENT_NOTE,
                }
            ]
        }
        spawning, alone = api.load(parent), api.load(child)
        await _spawn_run(fake, spawning)  # warm
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            result = await api.TeamRun(alone, CHILD_TASK, logs=False).execute()
            by_itself = time.perf_counter() - started
            if not result.ok:
                raise RuntimeError(f"the child alone ended {result.status}: {result.reason}")
            samples.append(await _spawn_run(fake, spawning, by_itself))
    return samples


async def _spawn_run(fake: FakeProvider, loaded: Any, alone: float = 0.0) -> SpawnSample:
    from massgen.runs.subagents import SUBAGENT_NOTE

    marks = _Marks()
    before = len(fake.requests)
    result = await api.TeamRun(loaded, QUESTION, sinks=[marks], logs=False).execute()
    if not result.ok or '"status": "completed"' not in result.answer:
        raise RuntimeError(f"the spawning run ended {result.status}: {result.answer[:300]}")
    children = [
        r
        for r in list(fake.requests)[before:]
        if SUBAGENT_NOTE in str(r["messages"][0].get("content"))
    ]
    return SpawnSample(
        marks.span(ev.ToolCallStarted, ev.ToolCallFinished),
        marks.span(ev.SubagentStarted, ev.SubagentFinished),
        len(children),
        alone,
    )


@dataclass
class _Marks:
    """When each kind of event was first seen (perf_counter)."""

    first: dict[type, float] = field(default_factory=dict)

    def __call__(self, event: ev.AnyEvent) -> None:
        self.first.setdefault(type(event), time.perf_counter())

    def span(self, start: type, end: type) -> float:
        return self.first[end] - self.first[start]


# --- ask_others ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AskSample:
    call: float  # ToolCallStarted -> ToolCallFinished of a1's first `ask_others`
    answers: int  # to that question
    model_call: float  # a1's first model call (AgentStarted -> its usage), for scale


def _asking(agents: Callable[[dict[str, Any]], Reply]) -> Callable[[dict[str, Any]], Reply]:
    """a1 asks its peers once before answering; they answer in one line; otherwise the
    bench's cooperative policy."""

    def policy(request: dict[str, Any]) -> Reply:
        system = str((request.get("messages") or [{}])[0].get("content"))
        if "Answering a question from your team" in system:
            return Reply(text="Paris: it has been the seat of power since the 10th century.")
        offered = {t["function"]["name"] for t in request.get("tools") or []}
        asked = any(m["role"] == "tool" for m in request["messages"])
        answered = "[a1 answer " in json.dumps(request["messages"])
        if request.get("model") == "a1" and "ask_others" in offered and not (asked or answered):
            return Reply(tool_calls=[("ask_others", {"question": "Which city, and why?"})])
        return agents(request)

    return policy


async def ask_runs(runs: int) -> list[AskSample]:
    with FakeProvider(_asking(Policy(0))) as fake:
        loaded = api.load(team_config(fake.base_url, {"broadcast": "agents"}))
        await _ask_run(loaded)  # warm
        return [await _ask_run(loaded) for _ in range(runs)]


async def _ask_run(loaded: Any) -> AskSample:
    marks: dict[str, float] = {}
    asked: list[str] = []  # request ids of a1's questions; the first is timed
    answers: list[str] = []

    def timeline(event: ev.AnyEvent) -> None:
        now = time.perf_counter()
        if getattr(event, "agent", None) != "a1":
            return
        timed = ev.ToolCallStarted | ev.ToolCallFinished | ev.AgentStarted | ev.UsageReported
        if isinstance(event, timed):
            marks.setdefault(event.kind, now)
        elif isinstance(event, ev.BroadcastAsked):
            asked.append(event.request_id)
        elif isinstance(event, ev.BroadcastAnswered) and event.ok:
            answers.append(event.request_id)

    result = await api.TeamRun(loaded, QUESTION, sinks=[timeline], logs=False).execute()
    if not result.ok or "tool_call_finished" not in marks:
        raise RuntimeError(f"the asking run ended {result.status}: {result.reason}")
    return AskSample(
        marks["tool_call_finished"] - marks["tool_call_started"],
        answers.count(asked[0]),
        marks["usage"] - marks["agent_started"],
    )


# --- the section ---------------------------------------------------------------------------


def render(
    cost: AidsCost, runs: int, load: tuple[float, float], cli_after: str | None = None
) -> str:
    return "\n\n".join(
        [
            "## 16. Coordination aids",
            f"Written by `python -m bench.aids` on {time.strftime('%Y-%m-%d')}: {runs} runs "
            f"of each measurement (1-minute load average {load[0]:.2f} before, {load[1]:.2f} "
            "after), through the code a run calls, every LLM call answered at once by the "
            "loopback fake provider, which runs in this process here (its replies depend on "
            "the request), so its own work is inside the times: it streams a reply one word per "
            "SSE chunk, which the openai SDK parses chunk by chunk. Team runs are "
            "`TeamRun.execute()` without logs.",
            "### Targets",
            report.table(["target", "measured (medians)", "result"], _targets_rows(cost)),
            _skills(cost),
            _memory(cost),
            _teams(cost, cli_after),
            _subagents(cost),
            _broadcast(cost),
        ]
    )


def targets(cost: AidsCost) -> list[tuple[str, str, bool]]:
    none, off = cost.teams["none"], cost.teams[OFF]
    same = [(s.calls, s.agent_chars) for s in none] == [(s.calls, s.agent_chars) for s in off]
    a, b = _median(s.wall for s in none), _median(s.wall for s in off)
    memory = max(cost.memory.values(), key=lambda m: m.short_term)
    fixed = memory_note_overhead()
    return [
        (
            "aid keys present but off: the same LLM calls and prompt characters as none",
            f"{off[0].calls} calls, {off[0].agent_chars:,} chars",
            same,
        ),
        (
            "… and wall time within 10% (or 5 ms) of none",
            f"{_ms(b - a)} ms ({b / a:.2f}x)",
            b - a <= max(0.1 * a, 0.005),
        ),
        (
            "memory section at most `memory_max_chars` + its fixed text, however many memories",
            f"{memory.note_chars:,} chars (bound {memory.bound_chars + fixed:,})",
            memory.note_chars <= memory.bound_chars + fixed,
        ),
    ]


def memory_note_overhead() -> int:
    """What a memory section holds besides the memories' texts, at most: the instructions,
    the block markers, a title line per memory shown and the long-term list's lines."""
    from massgen.workspace import memory

    bounds = memory.MemoryBounds()
    titles = bounds.max_short_term * 200 + bounds.max_long_term * 300 + 400
    return len(memory.INSTRUCTIONS) + len(memory.CUT_MARKER) + titles


def _targets_rows(cost: AidsCost) -> list[list[str]]:
    return [[name, value, "pass" if ok else "**FAIL**"] for name, value, ok in targets(cost)]


def _skills(cost: AidsCost) -> str:
    rows = [
        [
            str(n),
            *report.spread(c.discover, _ms),
            *report.spread(c.prompt_and_tools, _ms),
            f"{c.prompt_chars:,}",
        ]
        for n, c in cost.skills.items()
    ]
    headers = ["skills", *_heads("discover ms"), *_heads("prompt + tools ms"), "prompt chars"]
    return "\n\n".join(
        [
            "### Skills (`use_skills`)",
            "A run with skills calls `skills.discover` once (all agents share its catalogue), "
            "then builds the prompt section and the skill toolbox. Each skill is a folder in "
            "the project's skills directory with a `SKILL.md` (front matter, a 2 KB body) and "
            "a script beside it; the user's and bundled sources are empty, so exactly N are "
            "found (64 is `MAX_SKILLS`, the most a prompt lists). **Prompt chars** is what "
            "the section adds to every agent's system prompt, on every call.",
            report.table(headers, rows),
        ]
    )


def _memory(cost: AidsCost) -> str:
    rows = [
        [
            name,
            f"{m.short_term} x {m.chars_each:,} chars, {m.long_term}",
            *report.spread(m.seconds, _ms),
            f"{m.note_chars:,}",
        ]
        for name, m in cost.memory.items()
    ]
    headers = [
        "memories",
        "per agent: short-term, long-term",
        *_heads("ms per agent run"),
        "section chars",
    ]
    return "\n\n".join(
        [
            "### Filesystem memory (`enable_memory_filesystem_mode`)",
            f"{AGENTS} agents, each with its memories in its workspace and its answer "
            "published (a snapshot); then each agent's memory section as its next run "
            "builds it (`TeamMemory.note`, the default `MemoryBounds`: 10 short-term, 8,000 "
            "characters, 20 long-term), its own memories and its two peers' (read from "
            "their snapshots). Times are per call, over every agent and run; **section "
            "chars** is the largest section, added to that agent's system prompt.",
            report.table(headers, rows),
        ]
    )


def _teams(cost: AidsCost, cli_after: str | None) -> str:
    none = cost.teams["none"]
    base_wall = _median(s.wall for s in none)
    base_chars = _median(s.agent_chars for s in none)
    rows = []
    for name, samples in cost.teams.items():
        wall = _median(s.wall for s in samples)
        rows.append(
            [
                name,
                *report.spread([s.wall for s in samples], _ms),
                f"{_ms(wall - base_wall)}",
                f"{_ms(_median(s.preparation for s in samples))}",
                f"{_median(s.calls for s in samples):.0f} "
                f"({_median(s.generation_calls for s in samples):.0f})",
                f"{_median(s.agent_chars for s in samples) - base_chars:+,.0f}",
                f"{_median(s.generation_chars for s in samples):,.0f}",
            ]
        )
    headers = [
        "aids",
        *_heads("wall ms"),
        "added ms",
        "of which generating ms",
        "LLM calls (generations)",
        "agents' prompt chars added",
        "generation prompt chars",
    ]
    compare = (
        f" For scale, §2's 3-agent run through the CLI takes {cli_after} from its first LLM "
        "call to exit, with the fake in its own process."
        if cli_after
        else ""
    )
    return "\n\n".join(
        [
            "### Personas, evaluation criteria and question paraphrases",
            f"A full {AGENTS}-agent run at 0 ms (answers of 1,000 characters, votes, the "
            "final presentation; the policy of §2), with each aid on and off, the configs "
            "taking turns. **Added ms** is the median's difference from `none`; **of which "
            "generating**: from the run's start to its first agent's start, the generation "
            "calls (one per aid, both at once when both are on), whose replies stream as "
            f"{_chunks(cost, 'personas')}, {_chunks(cost, 'criteria')} and "
            f"{_chunks(cost, 'paraphrases')} chunks (one word "
            "each): at 0 ms most of it is the openai SDK turning each chunk into its model "
            "objects (a profile puts it in `openai._models.construct_type`), beside the fake "
            "writing them, on one GIL. **Agents' prompt chars added**: over all the agents' calls, "
            f"what the persona (shown until an agent has answered), the {CRITERIA} "
            "criteria (shown on every call) and each agent's rephrasing of the question (on "
            "its every call) add; the generation requests are counted apart." + compare,
            report.table(headers, rows),
        ]
    )


def _chunks(cost: AidsCost, kind: str) -> str:
    """How many stream chunks the fake's reply to a generation call of `kind` has."""
    from massgen.testing.http_fake import words

    request = {"messages": [{"role": "user", "content": "You are assigning different"}]}
    if kind == "personas":
        request["messages"][0]["content"] += "\n" + "\n".join(f"- agent{n}" for n in (1, 2, 3))
    elif kind == "criteria":
        request["messages"][0]["content"] = "You are writing the evaluation criteria"
    else:
        request["messages"][0]["content"] = "You are rephrasing a user's request"
    return f"{len(words(Generating()(request).text)):,}"


def _subagents(cost: AidsCost) -> str:
    samples = cost.subagents
    overhead = [s.call - s.alone for s in samples]
    rows = [
        [
            "`spawn_subagents` call (tool start to result)",
            *report.spread([s.call for s in samples], _ms),
        ],
        ["… the child's TeamRun inside it", *report.spread([s.child for s in samples], _ms)],
        ["the same child as a TeamRun of its own", *report.spread([s.alone for s in samples], _ms)],
        ["**the call's overhead** (call minus the child alone)", *report.spread(overhead, _ms)],
    ]
    calls = _median(s.child_calls for s in samples)
    return "\n\n".join(
        [
            "### Subagents (`enable_subagents`)",
            "One agent with a workspace calls `spawn_subagents` with one task; the child "
            f"(a one-agent TeamRun in this process, {calls:.0f} LLM call(s)) answers at once. "
            "The overhead is what the tool adds around a child run: parsing the tasks, the "
            "child's config, its workspace inside the parent's and its events.",
            report.table(["step", *_heads("ms")], rows),
        ]
    )


def _broadcast(cost: AidsCost) -> str:
    samples = cost.broadcast
    rows = [
        [
            "`ask_others` call (tool start to answers)",
            *report.spread([s.call for s in samples], _ms),
        ],
        [
            "for scale: the asker's first model call",
            *report.spread([s.model_call for s in samples], _ms),
        ],
    ]
    answers = _median(s.answers for s in samples)
    return "\n\n".join(
        [
            "### Questions between agents (`broadcast: agents`)",
            f"In a {AGENTS}-agent run, the first agent asks its peers once (`wait`) before "
            f"answering; each peer answers in one model call of its own ({answers:.0f} "
            "answers), beside its own run. The round trip is the question's events, the "
            "peers' calls at once and the answers' collection.",
            report.table(["step", *_heads("ms")], rows),
        ]
    )


def _cli_overhead() -> str | None:
    """§2's "first LLM call to exit" as docs/benchmarks.md has it now, if it does."""
    try:
        text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r"\*\*run on top of startup: first LLM call to exit\*\* \| ([0-9.]+ s)", text)
    return found.group(1) if found else None


def _heads(what: str) -> list[str]:
    return [f"{what} median", "min", "max"]


def _median(values: Any) -> float:
    return statistics.median(list(values))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


if __name__ == "__main__":
    sys.exit(main())
