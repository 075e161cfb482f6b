"""`massgen mcp`: the team as an MCP server.

    massgen mcp --config @examples/three_agents        # stdio, for `claude mcp add`
    massgen mcp --http --port 8643                     # streamable HTTP at /mcp, with a token

Over HTTP the rules are `massgen serve`'s: loopback unless `--host` says otherwise, and
then only with a long token from the environment; a generated token is printed once, on
stderr. On stdio nothing but the protocol goes to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from massgen.core.status import ExitCode
from massgen.serve import launch
from massgen.serve.auth import Token

DEFAULT_PORT = 8643
DEFAULT_TOKEN_ENV = "MASSGEN_MCP_TOKEN"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="massgen mcp",
        description="The team as an MCP server: tools ask_team, review, list_teams.",
        epilog="Register with Claude Code:  claude mcp add massgen -- massgen mcp\n"
        'Or in ~/.codex/config.toml:  [mcp_servers.massgen]  command = "massgen"  '
        'args = ["mcp"]',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--config", metavar="FILE", help="the team 'massgen' (default team if omitted)")
    add("--teams-dir", metavar="DIR", help="also offer every team config file in DIR, by name")
    add("--http", action="store_true", help="streamable HTTP at /mcp instead of stdio")
    launch.listen_options(add, port=DEFAULT_PORT, token_env=DEFAULT_TOKEN_ENV, when="with --http: ")
    add("--max-concurrent", type=int, default=2, metavar="N", help="team runs at once (2)")
    add("--timeout", type=float, metavar="S", help="seconds per run (default: the config's)")
    add("--max-cost", type=float, default=2.0, metavar="USD", help="cap per run (default 2)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    prepared = launch.prepare(args, _refusal, "massgen mcp")
    if prepared is None:
        return ExitCode.CONFIG
    token, teams = prepared
    from massgen.mcp_server.asking import Asker, Limits
    from massgen.mcp_server.server import build

    asker = Asker(teams, Limits(args.max_concurrent, args.timeout, args.max_cost))
    if args.http:
        return _serve_http(build(asker), args, token)
    import anyio

    from massgen.mcp_server import stdio

    out = stdio.Out()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C stops a server, as `serve`'s
        anyio.run(stdio.serve, build(asker, out.send_now), out)
    _stdout_gone()
    return ExitCode.OK


def _stdout_gone() -> None:
    """The SDK's stdio transport (used when stdio is not a pipe) closes stdout when the
    client leaves; `massgen.cli`'s final flush must not turn that into a traceback."""
    if sys.stdout.closed:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit


def _refusal(args: argparse.Namespace, token: Token) -> str | None:
    if not 1 <= args.max_concurrent <= 64:
        return "--max-concurrent must be between 1 and 64"
    if args.timeout is not None and not 1 <= args.timeout <= 24 * 3600:
        return "--timeout must be between 1 and 86400 seconds"
    if not args.max_cost > 0:
        return "--max-cost must be more than 0"
    if not args.http:  # stdio: the host and token are not used
        return launch.port_refusal(args.port)
    return launch.port_refusal(args.port) or launch.host_refusal(args.host, token, args.token_env)


def _serve_http(server: object, args: argparse.Namespace, token: Token) -> int:
    from massgen.mcp_server.http import PATH, guarded

    app = guarded(server.streamable_http_app(), token, args.token_env, args.host)  # type: ignore[attr-defined]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"massgen mcp: http://{shown}:{args.port}{PATH} (streamable HTTP)", file=sys.stderr)
    print(launch.token_line(token, args.token_env), file=sys.stderr)
    return launch.listen(app, args.host, args.port)
