"""`massgen QUESTION`: one team turn with the view the arguments ask for, reported.

`cli.py` parses and loads; this runs: the view (`ui/choice.py`), the turn (made when it
starts: under the app after its first frame), Ctrl-C and a crashed app, the exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.core.status import ExitCode

if TYPE_CHECKING:
    from massgen.api import LoadedConfig, RunResult, TeamRun
    from massgen.coordination.prompts import Turn
    from massgen.coordination.resume import Resumed
    from massgen.core.events import AnyEvent


def predecessor_notes(raw: object, source: str | None) -> list[str]:
    """What the predecessor's keys in `raw` do not do here (`config/predecessor.py`)."""
    from massgen.config import predecessor

    return predecessor.grouped(predecessor.translate(raw, source or "")[1])


def drive(
    args: argparse.Namespace,
    argv: list[str],
    loaded: LoadedConfig,
    question: str,
    log_dir: Path | None = None,
    resumed: Resumed | None = None,
    history: Sequence[Turn] = (),
) -> int:
    """Run one team turn with the view the arguments ask for; the exit code.

    The turn is made when it starts: under the app, after the app's first frame and the
    turn's imports (`warm_up`, in a thread), so the screen is up before they load."""
    from functools import partial

    from massgen.runs import interrupts
    from massgen.ui.tui import AppFailed

    for note in predecessor_notes(loaded.raw, loaded.source):
        print(f"massgen: note: {note}", file=sys.stderr)
    view = _view(args, loaded, question)
    events: list[AnyEvent] = []
    made: list[TeamRun] = []
    start = partial(_start_turn, args, argv, loaded, question, view, events, made)
    main = _execute(start, log_dir, resumed, history)
    drive = getattr(view, "drive", None)  # the app runs the turn; other views are sinks
    if drive is not None:
        main = drive(main, warm=partial(_warm_up, loaded))
    try:
        result = interrupts.run_interruptible(main)
    except KeyboardInterrupt:
        return _interrupted(made[0] if made else None)
    except AppFailed as failure:
        return _app_failed(made[0] if made else None, failure)
    finally:
        close = getattr(view, "close", None)  # the terminal views; the JSON printer has none
        if close is not None:
            close()
    if args.show_table:
        _print_table(events)
    return _report(result, args)


async def _execute(
    start: Any, log_dir: Path | None, resumed: Resumed | None, history: Sequence[Turn]
) -> RunResult:
    turn = start(log_dir, resumed, history)
    return await turn.execute()


def _start_turn(
    args: argparse.Namespace,
    argv: list[str],
    loaded: LoadedConfig,
    question: str,
    view: Any,
    events: list[AnyEvent],
    made: list[TeamRun],
    log_dir: Path | None,
    resumed: Resumed | None,
    history: Sequence[Turn],
) -> TeamRun:
    """The turn, its log directory open (named on stdout under --automation); in `made`."""
    from pathlib import Path

    from massgen.api import TeamRun
    from massgen.runs import interrupts
    from massgen.ui.choice import approver_for

    turn = TeamRun(
        loaded,
        question,
        sinks=[view, events.append] if args.show_table else [view],
        logs=not args.no_logs or args.automation or resumed is not None,
        log_dir=log_dir,
        deadline_seconds=args.orchestrator_timeout,
        cli_args=argv,
        approver=approver_for(view),
        resumed=resumed,
        history=history,
        replay=Path(args.replay) if getattr(args, "replay", None) else None,
    )
    made.append(turn)
    log_dir = turn.open_log()
    if args.debug and log_dir:
        _enable_debug_log(log_dir)
    if args.automation and log_dir:
        print(f"LOG_DIR: {log_dir}\nSTATUS: {log_dir / 'status.json'}", flush=True)
    interrupts.farewell = _resume_hint(log_dir)
    return turn


def _warm_up(loaded: LoadedConfig) -> None:
    from massgen.runs.turn import warm_up

    warm_up(loaded.config)


def _print_table(events: list[AnyEvent]) -> None:
    import shutil

    from massgen.record.table import coordination_table

    width = min(120, shutil.get_terminal_size().columns)
    print("\n" + coordination_table(events, width=width), end="", flush=True)


def _view(args: argparse.Namespace, loaded: LoadedConfig, question: str) -> Any:
    if args.stream_events:
        return _print_event_json
    if args.automation:
        return lambda event: None
    chosen = display(args, loaded)
    if chosen == "silent":
        return _print_final_answer
    from massgen.ui.choice import view_for

    return view_for(chosen, loaded.config, question)


def display(args: argparse.Namespace, loaded: LoadedConfig) -> str:
    from massgen.ui.choice import display_for

    return display_for(args.display, ui=loaded.config.ui, no_display=args.no_display)


def _print_final_answer(event: Any) -> None:
    """`ui.display_type: silent`: nothing while the team works, then the answer."""
    from massgen.core.events import RunFinished

    if isinstance(event, RunFinished):
        print(event.answer or f"(no answer: {event.reason})", flush=True)


def _print_event_json(event: Any) -> None:
    import json

    sys.stdout.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def _enable_debug_log(log_dir: Path) -> None:
    import contextlib

    from massgen.log import logger

    logger.enable("massgen")
    # Only the file: loguru's default sink would print the debug log on stderr. And no
    # `diagnose`: it prints the values of local variables in tracebacks, API keys among them.
    with contextlib.suppress(ValueError):
        logger.remove(0)
    logger.add(log_dir / "massgen_debug.log", level="DEBUG", enqueue=False, diagnose=False)


def _report(result: RunResult, args: argparse.Namespace) -> int:
    if args.output_file:
        from pathlib import Path

        Path(args.output_file).write_text(result.answer + "\n", encoding="utf-8")
    if args.automation:
        print(f"STATUS_RESULT: {result.status}")
        print(f"WINNER: {result.winner or '-'}")
        from massgen.backends.pricing import format_cost

        print(f"COST: {format_cost(result.total_cost_usd)}")
        print(f"WORTH: {result.worth()}")
        print(f"CALLS: {result.live_calls} live, {result.replayed_calls} replayed")
        print(f"ANSWER: {result.answer}")
        if args.output_file:
            print(f"OUTPUT_FILE: {args.output_file}")
        for line in result.context_changes.lines():
            print(f"CONTEXT_CHANGE: {line.strip()}")
    elif not args.stream_events:
        if result.context_changes:
            lines = "\n".join(result.context_changes.lines())
            print(f"\nchanged in your context paths:\n{lines}", file=sys.stderr)
        if result.log_dir:
            print(f"\nlogs: {result.log_dir}", file=sys.stderr)
    return result.status.exit_code()


def _interrupted(turn: TeamRun | None) -> int:
    """The view has already shown the best answer (the run ends with RunFinished)."""
    outcome = turn.outcome if turn else None
    log_dir = turn.log_dir if turn else None
    where = f" Logs: {log_dir}" if log_dir else ""
    kept = "kept the best answer so far" if outcome and outcome.answer else "no answer yet"
    print(f"\nmassgen: interrupted; {kept}.{where}{_resume_hint(log_dir)}", file=sys.stderr)
    return ExitCode.INTERRUPTED


def _app_failed(turn: TeamRun | None, failure: Exception) -> int:
    """The app crashed (its traceback is above): what became of the run, and its logs."""
    stopped = getattr(failure, "stopped", False)
    log_dir = turn.log_dir if turn else None
    where = f" Logs: {log_dir}" if log_dir else ""
    if turn is None:
        run = "the run had not started"
    elif stopped:
        run = "the run was stopped, keeping what was decided"
    else:
        run = "the run had ended"
    hint = _resume_hint(log_dir) if stopped and turn else ""
    print(f"\nmassgen: the app failed ({failure}); {run}.{where}{hint}", file=sys.stderr)
    return ExitCode.EXECUTION


def _resume_hint(log_dir: Path | None) -> str:
    return f"\nresume with: massgen --resume {log_dir}" if log_dir else ""
