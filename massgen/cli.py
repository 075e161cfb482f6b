"""The `massgen` command. `main(argv) -> int`; user errors are one line and an exit code.

Only argparse is imported up front: `massgen --help` must not pay for any SDK.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

import massgen.cli_output as cli_output
from massgen.core.status import ExitCode
from massgen.core.version import VERSION

# Not `typing.TYPE_CHECKING`: importing typing (and asyncio, json, pathlib) costs `--help`
# more than the rest of the CLI; they are imported where a command needs them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    from massgen.api import LoadedConfig


class Parser(argparse.ArgumentParser):
    """A wrong flag is the user's to fix: one line and exit 1 (`ExitCode.CONFIG`), not
    argparse's usage block and exit 2, which the README gives to a failed run."""

    def error(self, message: str) -> NoReturn:
        from massgen.core.errors import one_line

        line = one_line(f"{self.prog}: error: {message} (see {self.prog} --help)")
        self.exit(ExitCode.CONFIG, line + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="massgen",
        description="A team of LLM agents answers in parallel, refines, votes; the winner presents.",
        epilog="Examples:\n"
        '  massgen --config @examples/three_agents "What is the capital of France?"\n'
        '  massgen --model llama3 --base-url http://localhost:11434/v1 "Explain RAFT"\n'
        "  massgen --list-examples\n"
        "  massgen serve --config @examples/three_agents   (an OpenAI-compatible endpoint)\n"
        "  massgen batch TASKS.jsonl --out DIR             (a dataset, resumable)\n"
        "  massgen mcp --config @examples/three_agents     (an MCP server for coding agents)\n"
        "  massgen install-skill --claude                  (teach a coding agent to ask the team)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("question", nargs="?", help="the question; omit for interactive chat")
    for add_options in (_team_options, _run_options, _session_options, _setup_options):
        add_options(parser.add_argument)
    return parser


# The options in the order --help lists them.


def _team_options(add: Callable[..., Any]) -> None:
    add("--config", metavar="FILE", help="YAML/JSON config, or @examples/NAME for a preset")
    add("--backend", metavar="TYPE", help="backend type for a one-agent run (with --model)")
    add("--model", metavar="NAME", help="model for a one-agent run without a config file")
    add("--base-url", metavar="URL", help="OpenAI-compatible endpoint for --model")
    add("--system-message", metavar="TEXT", help="system message for --model")


def _run_options(add: Callable[..., Any]) -> None:
    display = "tui: the app (the default on a terminal); live: streaming panels; plain: text"
    add("--display", choices=("tui", "live", "plain"), help=display)
    add("--no-display", action="store_true", help="plain streaming text (--display plain)")
    add("--no-logs", action="store_true", help="do not write the run's log directory")
    add("--debug", action="store_true", help="write a debug log into the run's log directory")
    add("--orchestrator-timeout", type=float, metavar="SECONDS", help="deadline for the whole run")
    add("--max-tokens", type=int, metavar="N", help="stop starting calls past N tokens (exit 5)")
    add("--max-cost", type=float, metavar="USD", help="stop starting calls past USD (exit 5)")
    add("--output-file", metavar="PATH", help="also write the final answer to this file")
    add("--automation", action="store_true", help="no live view; LOG_DIR:/STATUS:/ANSWER: lines")
    add("--stream-events", action="store_true", help="print one JSON event per line on stdout")
    add("--show-table", action="store_true", help="print the coordination table after the run")


def _session_options(add: Callable[..., Any]) -> None:
    add(
        "--continue",
        dest="continue_session",
        action="store_true",
        help="continue the latest chat session",
    )
    add(
        "--resume",
        nargs="?",
        const="",
        metavar="LOG_DIR",
        help="continue an interrupted run from its journal (default: the newest one here)",
    )
    add("--replay", metavar="LOG_DIR", help="answer from a recorded run; new requests go live")
    add("--session-id", metavar="ID", help="continue the chat session ID (see --list-sessions)")
    add("--list-sessions", action="store_true", help="list the saved chat sessions and exit")


def _setup_options(add: Callable[..., Any]) -> None:
    add("--validate", metavar="FILE", help="check a config file and exit")
    add("--setup", action="store_true", help="set up API keys and a default team, interactively")
    add("--list-examples", action="store_true", help="list the preset configs")
    add("--example", metavar="NAME", help="print a preset config")
    add("--version", action="version", version=f"massgen {VERSION}")


# `massgen serve|batch|mcp|install-skill ...`: each module has `main(argv) -> int` and a
# parser of its own, imported only when its word comes first.
SUBCOMMANDS = {
    "serve": "massgen.serve.cli",
    "batch": "massgen.batch.cli",
    "mcp": "massgen.mcp_server.cli",
    "install-skill": "massgen.setup.skill",
}


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words and words[0] in SUBCOMMANDS:
        return _subcommand(words[0], words[1:])
    args = build_parser().parse_args(argv)
    from massgen.core.errors import ConfigError

    try:
        if args.list_examples:
            return _list_examples()
        if args.example:
            return _print_example(args.example)
        if args.validate:
            return _validate(args.validate)
        if args.list_sessions:
            return _list_sessions()
        if args.setup:
            return _setup(args, argv if argv is not None else sys.argv[1:])
        if args.resume is not None:
            return _resume(args, argv if argv is not None else sys.argv[1:])
        stop = _unconfigured(args)
        if stop is not None:
            return stop
        if not args.question and (args.automation or args.stream_events or args.replay):
            _fail("--automation, --stream-events and --replay need a question; chat is interactive")
            return ExitCode.CONFIG
        if not args.question or args.continue_session or args.session_id:
            return _chat(args, argv if argv is not None else sys.argv[1:])
        return _run(args, argv if argv is not None else sys.argv[1:])
    except ConfigError as error:
        _fail(error.render())
        return ExitCode.CONFIG


def _subcommand(name: str, argv: list[str]) -> int:
    import importlib

    from massgen.core.errors import ConfigError

    module = importlib.import_module(SUBCOMMANDS[name])
    try:
        code: int = module.main(argv)
    except ConfigError as error:
        _fail(error.render())
        return ExitCode.CONFIG
    return code


def entry() -> None:
    try:
        code = main()
        sys.stdout.flush()  # a pipe's buffered output fails here, not at exit
    except BrokenPipeError:
        # The reader of our output left (`massgen --list-examples | head`): not an error of
        # ours, and no traceback. Point stdout at /dev/null so the interpreter's final
        # flush does not fail the same way (the `signal` module docs' recipe).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = ExitCode.OK
    # Everything still alive lives until exit: hide it from the collector, or the
    # interpreter's final collection walks every SDK object (~150 ms) on the way out.
    gc.freeze()
    sys.exit(code)


def _fail(message: str) -> None:
    print(f"massgen: error: {message}", file=sys.stderr)


# --- commands that do not run a team -------------------------------------------------------


def _list_examples() -> int:
    from massgen.config.presets import list_examples

    for name, description in list_examples():
        print(f"@examples/{name:<28} {description}")
    return ExitCode.OK


def _print_example(name: str) -> int:
    from massgen.config.presets import example_text

    print(example_text(name.removeprefix("@examples/")), end="")
    return ExitCode.OK


def _validate(value: str) -> int:
    from massgen.cli_turn import predecessor_notes
    from massgen.runs.loading import load

    loaded = load(value)
    count = len(loaded.config.agents)
    print(f"{loaded.source}: valid ({count} agent{'s' if count != 1 else ''})")
    for note in predecessor_notes(loaded.raw, loaded.source):
        print(f"  note: {note}")
    return ExitCode.OK


def _list_sessions() -> int:
    from massgen.sessions import list_sessions, listing_text

    print(listing_text(list_sessions()), end="")
    return ExitCode.OK


# --- setup and the default team ----------------------------------------------------------


def _setup(args: argparse.Namespace, argv: list[str]) -> int:
    """`--setup`: the wizard, then the question given (or the one asked for at its end)."""
    if not _terminal(args):
        _fail("--setup asks questions, so it needs a terminal (stdin and stdout)")
        return ExitCode.CONFIG
    outcome = _wizard(first_run=False, offer_question=not args.question)
    if outcome is None:
        return ExitCode.INTERRUPTED
    args.question = args.question or getattr(outcome, "question", None)
    return _run(args, argv) if args.question else ExitCode.OK


def _unconfigured(args: argparse.Namespace) -> int | None:
    """Nothing configured: the wizard on a first run at a terminal, else one line on what
    the default team is. An exit code when the user cancelled the wizard."""
    if args.config or args.model:
        return None
    from massgen.config import presets

    if presets.find_default_config() is not None:
        return None
    from massgen.setup.wizard import needs_first_run

    if _terminal(args) and needs_first_run():
        if _wizard(first_run=True, offer_question=False) is None:
            return ExitCode.INTERRUPTED
        if presets.find_default_config() is not None:
            return None
    from massgen.config import loader
    from massgen.runs import defaults

    hint = defaults.default_team(loader.environment()).hint
    if hint:
        print(f"massgen: {hint}", file=sys.stderr)
    return None


def _terminal(args: argparse.Namespace) -> bool:
    quiet = args.automation or args.stream_events
    return not quiet and sys.stdin.isatty() and sys.stdout.isatty()


def _wizard(*, first_run: bool, offer_question: bool) -> Any:
    from massgen.config import loader
    from massgen.setup import wizard

    env = loader.environment()
    try:
        return wizard.run(env, first_run=first_run, offer_question=offer_question)
    except wizard.Cancelled:
        print("\nmassgen: setup cancelled; no file was changed.", file=sys.stderr)
        return None


# --- running a team ------------------------------------------------------------------------


def _load(args: argparse.Namespace) -> LoadedConfig:
    """The config the arguments name, with their command-line overrides."""
    from massgen.runs.loading import load  # not massgen.api: the run's modules load later

    loaded = load(
        args.config,
        model=args.model,
        backend=args.backend,
        base_url=args.base_url,
        system_message=args.system_message,
    )
    return _with_budget(loaded, args.max_tokens, args.max_cost)


def _with_budget(loaded: LoadedConfig, tokens: int | None, cost: float | None) -> LoadedConfig:
    """`--max-tokens` / `--max-cost` over the config's `orchestrator:` limits."""
    if tokens is None and cost is None:
        return loaded
    import dataclasses

    from massgen.core.errors import ConfigError

    for flag, value in (("--max-tokens", tokens), ("--max-cost", cost)):
        if value is not None and value <= 0:
            raise ConfigError(f"{flag} must be more than 0, got {value}")
    orchestrator = loaded.config.orchestrator
    limits = {
        "max_tokens": tokens or orchestrator.max_tokens,
        "max_cost": cost or orchestrator.max_cost,
    }
    config = loaded.config.model_copy(
        update={"orchestrator": orchestrator.model_copy(update=limits)}
    )
    return dataclasses.replace(loaded, config=config)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    if cli_output.app_first(args):  # the app is up before the config loads (under it)
        from functools import partial

        from massgen.cli_turn import drive_app

        return drive_app(args, argv, partial(_load, args), args.question)
    return _drive(args, argv, _load(args), args.question)


def _resume(args: argparse.Namespace, argv: list[str]) -> int:
    """`--resume [LOG_DIR]`: the interrupted run continues in its own log directory."""
    from massgen.runs.resuming import prepare

    if args.question:
        _fail("--resume continues a run's own question; give no question with it")
        return ExitCode.CONFIG
    target = prepare(args.resume or None, args.config)
    print(f"massgen: {target.resumed.summary()} from {target.log_dir}", file=sys.stderr)
    question = target.resumed.question
    return _drive(
        args,
        argv,
        _with_budget(target.loaded, args.max_tokens, args.max_cost),
        question,
        target.log_dir,
        target.resumed,
        target.history,
    )


def _drive(
    args: argparse.Namespace, argv: list[str], loaded: LoadedConfig, question: str, *rest: Any
) -> int:
    """The turn and its view (`cli_turn.py`): log_dir, resumed, history in `rest`."""
    from massgen.cli_turn import drive

    return drive(args, argv, loaded, question, *rest)


def _display(args: argparse.Namespace, loaded: LoadedConfig) -> str:
    return cli_output.display(args, loaded)


def _chat(args: argparse.Namespace, argv: list[str]) -> int:
    """No question: the interactive chat. --continue/--session-id with one: one saved turn."""
    from massgen.chat import run_chat

    loaded = _load(args)
    display = cli_output.display(args, loaded)
    return run_chat(
        loaded,
        # One saved turn (a question with --continue) keeps the live view in the app's place.
        live=display in ("tui", "live"),
        app=display == "tui",
        resume=args.continue_session,
        session_id=args.session_id,
        question=args.question or None,
        logs=not args.no_logs,
        deadline_seconds=args.orchestrator_timeout,
        cli_args=argv,
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    entry()
