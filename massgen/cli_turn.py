"""`massgen QUESTION`: one team turn with the view the arguments ask for, reported.

`cli.py` parses and loads (or, when the app opens first, hands over the loading: `drive_app`
loads under the app); this runs: the view (`ui/choice.py`), the turn (made when it starts:
under the app after its first frame), Ctrl-C and a crashed app, the exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import massgen.cli_output as cli_output
from massgen.core.status import ExitCode

if TYPE_CHECKING:
    from massgen.api import LoadedConfig, RunResult, TeamRun
    from massgen.coordination.prompts import Turn
    from massgen.coordination.resume import Resumed
    from massgen.core.events import AnyEvent


def predecessor_notes(raw: object, source: str | None) -> list[str]:
    """What the predecessor's keys in `raw` do not do here (`config/predecessor/`)."""
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

    for note in predecessor_notes(loaded.raw, loaded.source):
        print(f"massgen: note: {note}", file=sys.stderr)
    view = cli_output.view(args, loaded, question)
    made = _TurnMaker(args, argv, question, view, loaded)
    return _watch(args, view, made, partial(_warm_up, loaded), log_dir, resumed, history)


def drive_app(
    args: argparse.Namespace, argv: list[str], load: Callable[[], LoadedConfig], question: str
) -> int:
    """`drive` with the app opened before the config is loaded (`cli_output.app_first`):
    `load` runs after the app's first frame, in the thread that warms the turn's imports.
    A `ConfigError` closes the app and is raised here, for the CLI to say as before; the
    predecessor's notes are printed once the app has closed, above the answer."""
    from massgen.ui.tui.view import TuiView

    view = TuiView(question=question, preparing="loading the team")
    made = _TurnMaker(args, argv, question, view)

    def load_and_warm() -> None:
        loaded = made.loaded = load()
        view.set_models(_models(loaded))
        view.after_app.extend(
            f"massgen: note: {note}" for note in predecessor_notes(loaded.raw, loaded.source)
        )
        _warm_up(loaded)

    return _watch(args, view, made, load_and_warm)


def _watch(
    args: argparse.Namespace,
    view: Any,
    made: _TurnMaker,
    warm: Callable[[], None],
    log_dir: Path | None = None,
    resumed: Resumed | None = None,
    history: Sequence[Turn] = (),
) -> int:
    """The turn under `view` (the app drives it, after `warm`), Ctrl-C and a crashed app
    said, the view closed; the exit code."""
    from massgen.runs import interrupts
    from massgen.ui.tui import AppFailed

    main = _execute(made, log_dir, resumed, history)
    drive = getattr(view, "drive", None)  # the app runs the turn; other views are sinks
    if drive is not None:
        main = drive(main, warm=warm)
    try:
        result = interrupts.run_interruptible(main)
    except KeyboardInterrupt:
        return cli_output.interrupted(made.turn)
    except AppFailed as failure:
        return _app_failed(made.turn, failure)
    finally:
        close = getattr(view, "close", None)  # the terminal views; the JSON printer has none
        if close is not None:
            close()
    if args.show_table:
        cli_output.print_table(made.events)
    return cli_output.report(result, args)


async def _execute(
    made: _TurnMaker, log_dir: Path | None, resumed: Resumed | None, history: Sequence[Turn]
) -> RunResult:
    turn = made.start(log_dir, resumed, history)
    return await turn.execute()


class _TurnMaker:
    """What makes the turn (its config: given, or loaded under the app before the turn
    starts) and, once it starts, the turn and the events `--show-table` keeps."""

    def __init__(
        self,
        args: argparse.Namespace,
        argv: list[str],
        question: str,
        view: Any,
        loaded: LoadedConfig | None = None,
    ) -> None:
        self.args, self.argv, self.question, self.view = args, argv, question, view
        self.loaded = loaded
        self.turn: TeamRun | None = None
        self.events: list[AnyEvent] = []

    def start(
        self, log_dir: Path | None, resumed: Resumed | None, history: Sequence[Turn]
    ) -> TeamRun:
        """The turn, its log directory open (named on stdout under --automation)."""
        from massgen.api import TeamRun
        from massgen.runs import interrupts
        from massgen.ui.choice import approver_for, give_keys

        args, view = self.args, self.view
        assert self.loaded is not None, "the config loads before the turn starts"
        self.turn = turn = TeamRun(
            self.loaded,
            self.question,
            sinks=[view, self.events.append] if args.show_table else [view],
            logs=not args.no_logs or args.automation or resumed is not None,
            log_dir=log_dir,
            deadline_seconds=args.orchestrator_timeout,
            cli_args=self.argv,
            approver=approver_for(view),
            resumed=resumed,
            history=history,
            replay=Path(args.replay) if getattr(args, "replay", None) else None,
        )
        give_keys(view, turn)
        log_dir = turn.open_log()
        if args.debug and log_dir:
            _enable_debug_log(log_dir)
        if args.automation and log_dir:
            print(f"LOG_DIR: {log_dir}\nSTATUS: {log_dir / 'status.json'}", flush=True)
        interrupts.farewell = cli_output.resume_hint(log_dir)
        return turn


def _models(loaded: LoadedConfig) -> dict[str, str]:
    """Each agent's model, as the app lists them."""
    return {agent.id: agent.backend.model or "" for agent in loaded.config.agents}


def _warm_up(loaded: LoadedConfig) -> None:
    from massgen.runs.turn import warm_up

    warm_up(loaded.config)


def _enable_debug_log(log_dir: Path) -> None:
    import contextlib

    from massgen.log import logger

    logger.enable("massgen")
    # Only the file: loguru's default sink would print the debug log on stderr. And no
    # `diagnose`: it prints the values of local variables in tracebacks, API keys among them.
    with contextlib.suppress(ValueError):
        logger.remove(0)
    logger.add(log_dir / "massgen_debug.log", level="DEBUG", enqueue=False, diagnose=False)


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
    hint = cli_output.resume_hint(log_dir) if stopped and turn else ""
    print(f"\nmassgen: the app failed ({failure}); {run}.{where}{hint}", file=sys.stderr)
    return ExitCode.EXECUTION
