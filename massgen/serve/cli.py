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
from massgen.serve.auth import DEFAULT_TOKEN_ENV, Token, is_loopback
from massgen.serve.launch import listen, prepare

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8642
MIN_NETWORK_TOKEN = 16  # characters: a token that guards a network port must not be guessable


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
    add(
        "--host",
        default=DEFAULT_HOST,
        help="address to bind (default 127.0.0.1; others need a token)",
    )
    add("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    add(
        "--token-env",
        default=DEFAULT_TOKEN_ENV,
        metavar="NAME",
        help=f"environment variable holding the bearer token (default {DEFAULT_TOKEN_ENV}); "
        "without it a token is generated and printed once",
    )
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
    if not 0 <= args.port <= 65535:
        return "--port must be between 0 and 65535"
    if is_loopback(args.host):
        return None
    fix = f"(e.g. `export {args.token_env}=$(openssl rand -hex 32)`) or bind to 127.0.0.1"
    if token.generated:
        return (
            f"--host {args.host} is reachable from other machines, so it needs a token you "
            f"chose: set {args.token_env} {fix}"
        )
    if len(token.value) < MIN_NETWORK_TOKEN:
        return f"{args.token_env} is too short for --host {args.host}: use {MIN_NETWORK_TOKEN}+ characters {fix}"
    return None


def start_lines(host: str, port: int, token: Token, token_env: str) -> str:
    """What the terminal shows at start: where, the token (once, if generated), a curl."""
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    secret = token.value if token.generated else f"${token_env}"
    body = '{"model": "massgen", "messages": [{"role": "user", "content": "What is 2+2?"}]}'
    curl = f'curl -s {url}/v1/chat/completions -H "Authorization: Bearer {secret}"'
    lines = [f"massgen serve: {url}/v1 (OpenAI-compatible; model 'massgen' is the served team)"]
    if token.generated:
        lines.append(f"token (generated; set {token_env} to choose one): {token.value}")
        lines.append(f"web view: {url}/?token={token.value}")
    else:
        lines.append(f"token: from ${token_env}")
        lines.append(f"web view: {url}/ (log in with the token)")
    lines.append(f"try: {curl} -H 'Content-Type: application/json' -d {shlex.quote(body)}")
    return "\n".join(lines)
