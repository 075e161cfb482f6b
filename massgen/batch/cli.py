"""`massgen batch TASKS --out DIR ...` and `massgen batch report DIR`.

`main(argv) -> int`; the top-level CLI turns a ConfigError into one line and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.core.errors import ConfigError
from massgen.core.status import ExitCode

if TYPE_CHECKING:  # `massgen batch --help` loads none of the batch machinery
    from massgen.batch.runner import Plan, Row

    Rows = dict[tuple[str, str], Row]

BASELINES = ("single", "self-consistency")
EXECUTORS = ("local", "ray")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="massgen batch",
        description="Run a team on every question of a dataset: resumable, scored, and "
        "compared with single-call and self-consistency baselines at equal tokens.",
        epilog="Examples:\n"
        "  massgen batch @datasets/gsm8k-sample --limit 10 --out runs/gsm8k \\\n"
        "      --baselines single,self-consistency\n"
        "  massgen batch tasks.csv --field question=q,answer=a --config team.yaml --out out\n"
        "  massgen batch report runs/gsm8k        (the table again, and summary.png)\n"
        "  massgen batch @datasets/code-sample --scorer code --out runs/code\n"
        "  massgen batch ... --out runs/b --replay runs/a   (no model call for what runs/a has)\n"
        "Rerun the same command to resume: finished questions are skipped, failed ones retried.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("tasks", help="a .jsonl or .csv file of {id, question, answer}, or @datasets/NAME")
    add(
        "--out",
        metavar="DIR",
        help="where results, logs and the summary go (.massgen/batch/<tasks name>)",
    )
    add("--config", metavar="FILE", help="the team: YAML/JSON config or @examples/NAME")
    _job_options(add)
    _question_options(add)
    _method_options(add)
    add("--executor", choices=EXECUTORS, default="local", help="where jobs run (local)")
    add("--ray-actors", type=_positive, default=2, metavar="N", help="Ray actors (2)")
    add("--force", action="store_true", help="reuse --out even though the settings changed")
    add(
        "--replay",
        metavar="DIR",
        help="answer from the recorded batch in DIR (its --out); call the model for the rest",
    )
    return parser


def _job_options(add: Callable[..., Any]) -> None:
    """How many jobs run at once."""
    add("--concurrency", type=_positive, default=4, metavar="N", help="jobs at once (4)")
    add(
        "--provider-concurrency",
        type=_positive,
        default=8,
        metavar="N",
        help="jobs at once that call the same provider (8)",
    )


def _question_options(add: Callable[..., Any]) -> None:
    """Which questions, and how they are read."""
    add("--limit", type=_positive, metavar="N", help="only the first N questions")
    add("--shuffle", action="store_true", help="shuffle the questions (before --limit)")
    add("--seed", type=int, default=0, metavar="S", help="the shuffle's seed (0)")
    add("--field", metavar="OURS=THEIRS,...", help="column names, e.g. question=q,answer=a")


def _method_options(add: Callable[..., Any]) -> None:
    """What the team is compared with, and how answers are scored."""
    add("--baselines", metavar="LIST", help="single,self-consistency")
    add(
        "--sc-k",
        type=_positive,
        metavar="K",
        help="self-consistency samples (default: equal tokens)",
    )
    add(
        "--scorer",
        default="numeric",
        help="exact, numeric, choice, code or module:function (numeric)",
    )


def report_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="massgen batch report",
        description="Print a batch's summary table again and draw summary.png.",
    )
    parser.add_argument("out", metavar="DIR", help="the --out of a batch")
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def main(argv: list[str]) -> int:
    if argv and argv[0] == "report":
        return report(report_parser().parse_args(argv[1:]))
    args = build_parser().parse_args(argv)
    return run(args, argv)


# --- running a batch -----------------------------------------------------------------------


def run(args: argparse.Namespace, argv: list[str]) -> int:
    from massgen.batch import replay, runner, scoring, store
    from massgen.batch.tasks import load_tasks, parse_fields
    from massgen.runs.loading import load

    fields = parse_fields(args.field)
    baselines = _baselines(args.baselines)
    check = scoring.scorer(args.scorer)
    tasks = load_tasks(args.tasks, fields, limit=args.limit, shuffle=args.shuffle, seed=args.seed)
    loaded = load(args.config)
    out = Path(args.out) if args.out else default_out(args.tasks)
    replay_dir = Path(args.replay) if args.replay else None
    if replay_dir is not None:
        replay.check_source(replay_dir, out)
    store.check_manifest(out, _manifest(args, loaded, baselines, fields), force=args.force)
    plan = runner.Plan(
        tasks=tasks,
        out=out,
        scorer=check,
        agents=[agent.id for agent in loaded.config.agents],
        baselines=baselines,
        sc_k=args.sc_k,
        concurrency=args.concurrency,
        provider_concurrency=args.provider_concurrency,
        providers=runner.providers_of(loaded.config),
        replay=replay_dir,
    )
    rows = _drive(plan, _executor(args, loaded, out, replay_dir))
    if rows is None:
        return ExitCode.INTERRUPTED
    _conclude(plan, rows)
    return ExitCode.EXECUTION if _any_failed(rows, tasks) else ExitCode.OK


def _drive(plan: Plan, executor: Any) -> Rows | None:
    """Every job's row, with the progress shown meanwhile; None after Ctrl-C (what was
    finished is kept on disk, and the user is told how to resume)."""
    import asyncio

    from massgen.batch import runner, store
    from massgen.batch.progress import BatchProgress

    with BatchProgress() as progress:
        driver = runner.Driver(plan, executor, progress.update)
        try:
            return asyncio.run(driver.run())
        except KeyboardInterrupt:
            kept = sum(1 for _ in store.read_rows(plan.out))
            print(
                f"\nmassgen: batch interrupted; {kept} results kept in {plan.out / store.RESULTS} "
                "(in-flight questions dropped). Rerun the same command to resume.",
                file=sys.stderr,
            )
            return None


def _conclude(plan: Plan, rows: Rows) -> None:
    """The stage records and the summary written, and the table printed."""
    from massgen.batch import replay, stages, store, summary

    out, ids = plan.out, [task.id for task in plan.tasks]
    answers = {task.id: task.answer for task in plan.tasks}
    records = stages.build(out, rows, ids, answers, plan.scorer)
    stages.write(out, records)
    result = replay.add_calls(summary.summarise(rows, ids, records), out, ids)
    summary.write(out, result)
    _print_table(result)
    print(f"results: {out / store.RESULTS}\nsummary: {out / store.SUMMARY}", file=sys.stderr)


def default_out(tasks: str) -> Path:
    """`.massgen/batch/<name>`: the same for the same tasks, so a rerun resumes."""
    name = Path(tasks.removeprefix("@datasets/")).stem or "batch"
    return Path(".massgen") / "batch" / name


def _baselines(spec: str | None) -> frozenset[str]:
    names = {part.strip() for part in (spec or "").split(",") if part.strip()}
    unknown = sorted(names - set(BASELINES))
    if unknown:
        raise ConfigError(
            f"unknown baseline {unknown[0]!r}", fix=f"choose from {', '.join(BASELINES)}"
        )
    return frozenset(names)


def _manifest(
    args: argparse.Namespace, loaded: Any, baselines: frozenset[str], fields: dict[str, str]
) -> dict[str, Any]:
    """What decides the answers and their scores; the fingerprint is its hash."""
    from massgen.batch.store import fingerprint
    from massgen.config import loader
    from massgen.core.version import VERSION as __version__

    config = loader.redact(loaded.raw) if loaded.raw else loaded.config.model_dump(mode="json")
    settings = {
        "config": config,
        "scorer": args.scorer,
        "baselines": sorted(baselines),
        "sc_k": args.sc_k,
        "fields": fields,
    }
    return {
        "fingerprint": fingerprint(settings),
        "settings": settings,
        "tasks": args.tasks,
        "config_source": loaded.source,
        "massgen": __version__,
    }


def _executor(args: argparse.Namespace, loaded: Any, out: Path, replay: Path | None) -> Any:
    from massgen.batch import executors

    if args.executor == "ray":
        return executors.RayExecutor(
            loaded,
            out,
            args.scorer,
            actors=args.ray_actors,
            concurrency=args.concurrency,
            replay=replay,
        )
    return executors.LocalExecutor(loaded, out, args.scorer, replay)


def _any_failed(rows: dict, tasks: list) -> bool:
    from massgen.batch import store

    ids = {task.id for task in tasks}
    return any(
        tid in ids and row.get("status") not in store.FINISHED for (tid, _), row in rows.items()
    )


def _print_table(result: dict[str, Any]) -> None:
    from rich.console import Console

    from massgen.batch import replay, summary

    console = Console(width=120)
    console.print(summary.table(result))
    found = summary.stage_table(result)
    if found is not None:
        console.print(found)
    for line in summary.stage_lines(result):
        console.print(line, highlight=False, markup=False)
    calls = replay.calls_line(result)
    if calls:
        print(calls, file=sys.stderr)


# --- report ----------------------------------------------------------------------------------


def _stages_again(out: Path, manifest: dict, rows: dict, ids: list[str]) -> list | None:
    """The stage records rebuilt from the team logs, scored against the batch's tasks;
    None (with a note) when those tasks cannot be read from here."""
    from massgen.batch import scoring, stages
    from massgen.batch.tasks import load_tasks

    settings = manifest.get("settings") or {}
    try:
        tasks = load_tasks(str(manifest.get("tasks")), settings.get("fields") or {})
        check = scoring.scorer(str(settings.get("scorer") or "numeric"))
    except ConfigError as error:
        print(f"massgen: no stage table: the batch's tasks: {error.message}", file=sys.stderr)
        return None
    records = stages.build(out, rows, ids, {task.id: task.answer for task in tasks}, check)
    stages.write(out, records)
    return records


def report(args: argparse.Namespace) -> int:
    from massgen.batch import replay, store, summary

    out = Path(args.out)
    manifest = store.read_manifest(out)  # a clear error when DIR holds no batch
    rows = store.read_rows(out)
    ids = list(dict.fromkeys(tid for tid, _ in rows))
    result = replay.add_calls(
        summary.summarise(rows, ids, _stages_again(out, manifest, rows, ids)), out, ids
    )
    summary.write(out, result)
    _print_table(result)
    drawn = summary.chart(out, result)
    if drawn is None:
        print(
            "massgen: no chart: pip install 'massgen[plot]' (or nothing was scored)",
            file=sys.stderr,
        )
    else:
        print(f"chart: {drawn}", file=sys.stderr)
    return ExitCode.OK
