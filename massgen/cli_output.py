"""What a team run started from the command line shows, as its flags ask: the view (the
app, live or plain panels, one JSON event per line, nothing under `--automation`, the
answer alone for `ui.display_type: silent`), the coordination table (`--show-table`), the
closing report (`--automation`'s `KEY: value` lines, changed context paths, the log
directory) and the notice when the user interrupts it. `cli.py` decides what to run.

Imports are where they are used: `massgen --help` imports this module too.
"""

from __future__ import annotations

import sys

from massgen.core.status import ExitCode

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: see cli.py
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

    from massgen.api import LoadedConfig, RunResult, TeamRun
    from massgen.core.events import AnyEvent


def print_table(events: list[AnyEvent]) -> None:
    import shutil

    from massgen.record.table import coordination_table

    width = min(120, shutil.get_terminal_size().columns)
    print("\n" + coordination_table(events, width=width), end="", flush=True)


def view(args: argparse.Namespace, loaded: LoadedConfig, question: str) -> Any:
    """The run's sink; the app also drives the run (`TuiView.drive`)."""
    if args.stream_events:
        return _print_event_json
    if args.automation:
        return lambda event: None
    chosen = display(args, loaded)
    if chosen == "silent":
        return _print_final_answer
    from massgen.ui.choice import view_for

    return view_for(chosen, loaded.config, question)


def app_first(args: argparse.Namespace, **terminal: Any) -> bool:
    """Whether the view is the app, told before the config is loaded (the file is only
    read for a `ui.display_type`): the app then opens first and the config loads under
    it. False where that cannot be told so (the config is loaded first, as for the other
    views). `terminal`: `display_for`'s `stdin`, `stdout` and `env`."""
    if args.stream_events or args.automation or args.no_display:
        return False
    from massgen.config import peek
    from massgen.ui.choice import display_for

    configured = None if args.display else _configured_display(args)
    if configured == peek.UNKNOWN:
        return False
    return display_for(args.display, configured=configured, **terminal) == "tui"


def _configured_display(args: argparse.Namespace) -> str | None:
    from massgen.config import peek, presets
    from massgen.core.errors import ConfigError

    if args.config:
        try:
            path = presets.resolve_config_arg(args.config)
        except ConfigError:  # said when the config loads, before any view opens
            return peek.UNKNOWN
    elif args.model:
        return None  # a one-agent config of the flags: no `ui:`
    else:
        found = presets.find_default_config()
        if found is None:  # the default team, made from the environment
            return peek.UNKNOWN
        path = found
    return peek.display_named(path)


def display(args: argparse.Namespace, loaded: LoadedConfig) -> str:
    """`--display`, `--no-display` and the config's `ui:`, decided (`ui/choice.py`)."""
    from massgen.ui.choice import display_for

    return display_for(args.display, ui=loaded.config.ui, no_display=args.no_display)


def _print_final_answer(event: Any) -> None:
    """`ui.display_type: silent`: nothing while the team works, then the answer."""
    from massgen.core.events import RunFinished

    if isinstance(event, RunFinished):
        ended = event.outcome
        print(ended.answer or f"(no answer: {ended.reason})", flush=True)


def _print_event_json(event: Any) -> None:
    import json

    sys.stdout.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def report(result: RunResult, args: argparse.Namespace) -> int:
    """After the run: `--output-file`, then its report; the exit code."""
    if args.output_file:
        from pathlib import Path

        Path(args.output_file).write_text(result.answer + "\n", encoding="utf-8")
    if args.automation:
        _automation_report(result, args.output_file)
    elif not args.stream_events:
        if result.context_changes:
            lines = "\n".join(result.context_changes.lines())
            print(f"\nchanged in your context paths:\n{lines}", file=sys.stderr)
        if result.log_dir:
            print(f"\nlogs: {result.log_dir}", file=sys.stderr)
    return result.status.exit_code()


def _automation_report(result: RunResult, output_file: str | None) -> None:
    """`--automation`: one `KEY: value` line each, for a program to read."""
    from massgen.backends.pricing import format_cost

    print(f"STATUS_RESULT: {result.status}")
    print(f"WINNER: {result.winner or '-'}")
    print(f"COST: {format_cost(result.total_cost_usd)}")
    print(f"WORTH: {result.worth()}")
    print(f"CALLS: {result.live_calls} live, {result.replayed_calls} replayed")
    print(f"ANSWER: {result.answer}")
    if output_file:
        print(f"OUTPUT_FILE: {output_file}")
    for line in result.context_changes.lines():
        print(f"CONTEXT_CHANGE: {line.strip()}")


def interrupted(turn: TeamRun | None) -> int:
    """The view has already shown the best answer (the run ends with RunFinished); `turn`:
    None when it was interrupted before the turn was made (under the app's first frame)."""
    outcome = turn.outcome if turn else None
    log_dir = turn.log_dir if turn else None
    where = f" Logs: {log_dir}" if log_dir else ""
    kept = "kept the best answer so far" if outcome and outcome.answer else "no answer yet"
    print(f"\nmassgen: interrupted; {kept}.{where}{resume_hint(log_dir)}", file=sys.stderr)
    return ExitCode.INTERRUPTED


def resume_hint(log_dir: Path | None) -> str:
    return f"\nresume with: massgen --resume {log_dir}" if log_dir else ""
