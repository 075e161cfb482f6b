"""`massgen serve`: start the OpenAI-compatible endpoint and the web view.

    massgen serve --config @examples/three_agents           # http://127.0.0.1:8642
    MASSGEN_SERVE_TOKEN=... massgen serve --host 0.0.0.0    # reachable from elsewhere

Loopback only unless `--host` says otherwise, and then only with a token from the
environment: a token generated at start is printed to this terminal, which is fine for
one user on one machine and wrong for a listening network port.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from typing import Any

from massgen.core.status import ExitCode
from massgen.serve.auth import DEFAULT_TOKEN_ENV, Token
from massgen.serve.launch import (
    host_refusal,
    listen,
    listen_options,
    port_refusal,
    prepare,
    token_line,
)

DEFAULT_PORT = 8642


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="massgen serve",
        description="OpenAI-compatible /v1/chat/completions and /v1/responses over a team, "
        "and a live web view.",
        epilog="Example:\n"
        "  massgen serve --config @examples/three_agents\n"
        "  then: OpenAI(base_url='http://127.0.0.1:8642/v1', api_key=TOKEN)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add(
        "--config",
        metavar="FILE",
        help="the team served as model 'massgen' (default team if omitted)",
    )
    _network_options(add)
    _run_options(add)
    return parser


def _network_options(add: Callable[..., Any]) -> None:
    """Where the server listens, and who may reach it."""
    listen_options(add, port=DEFAULT_PORT, token_env=DEFAULT_TOKEN_ENV)
    add(
        "--cors-origin",
        metavar="ORIGIN",
        help="allow browser calls from this origin (none by default)",
    )
    add(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host header is NAME (repeatable; loopback names and "
        "--host always are): the name clients use for this machine",
    )


def _run_options(add: Callable[..., Any]) -> None:
    """What the served teams may do."""
    add("--max-concurrent", type=int, default=4, metavar="N", help="team runs at once (default 4)")
    add("--teams-dir", metavar="DIR", help="also serve every team config file in DIR, by file name")
    add(
        "--ask-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds a permission ask waits for an answer on the web page, then is a deny "
        "(default 300); an agent's question (broadcast: human) waits at most this long too",
    )


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    prepared = prepare(args, _refusal, "massgen serve")
    if prepared is None:
        return ExitCode.CONFIG
    token, teams = prepared
    from massgen.serve.app import Settings, build_app

    settings = Settings(
        teams,
        token,
        args.max_concurrent,
        args.cors_origin,
        args.ask_timeout,
        host=args.host,
        allowed_hosts=tuple(args.allowed_host),
    )
    print(start_lines(args.host, args.port, token, args.token_env), flush=True)
    return listen(build_app(settings), args.host, args.port)


def _refusal(args: argparse.Namespace, token: Token) -> str | None:
    if not 1 <= args.max_concurrent <= 256:
        return "--max-concurrent must be between 1 and 256"
    if not 1 <= args.ask_timeout <= 3600:
        return "--ask-timeout must be between 1 and 3600 seconds"
    return port_refusal(args.port) or host_refusal(args.host, token, args.token_env)


def start_lines(host: str, port: int, token: Token, token_env: str) -> str:
    """What the terminal shows at start: where, the token (once, if generated), a curl."""
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    secret = token.value if token.generated else f"${token_env}"
    body = '{"model": "massgen", "messages": [{"role": "user", "content": "What is 2+2?"}]}'
    curl = f'curl -s {url}/v1/chat/completions -H "Authorization: Bearer {secret}"'
    lines = [
        f"massgen serve: {url}/v1 (OpenAI-compatible; model 'massgen' is the served team)",
        token_line(token, token_env),
    ]
    if token.generated:
        lines.append(f"web view: {url}/?token={token.value}")
    else:
        lines.append(f"web view: {url}/ (log in with the token)")
    lines.append(f"try: {curl} -H 'Content-Type: application/json' -d {shlex.quote(body)}")
    return "\n".join(lines)
