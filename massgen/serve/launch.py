"""What `massgen serve` and `massgen mcp` share around their listening socket: the
listening flags, the token from the environment, the refusal of unsafe flags, the checked
teams, and uvicorn.

Nothing heavy at import: `massgen serve --help` must not load the web stack or a config.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from massgen.core.status import ExitCode
from massgen.serve.auth import Token, is_loopback

TYPE_CHECKING = False  # not typing's: `massgen serve --help` stays light
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from massgen.serve.teams import Teams

    Refusal = Callable[[argparse.Namespace, Token], str | None]

LOOPBACK = "127.0.0.1"
MIN_NETWORK_TOKEN = 16  # characters: a token that guards a network port must not be guessable


def listen_options(add: Callable[..., Any], *, port: int, token_env: str, when: str = "") -> None:
    """`--host`, `--port` and `--token-env`: where the server listens, and the variable its
    token is read from. `when` starts each help line (`"with --http: "`)."""
    add(
        "--host",
        default=LOOPBACK,
        help=f"{when}address to bind (default {LOOPBACK}; others need a token)",
    )
    add("--port", type=int, default=port, help=f"{when}port (default {port})")
    add(
        "--token-env",
        default=token_env,
        metavar="NAME",
        help=f"{when}environment variable holding the bearer token (default {token_env}); "
        "without it a token is generated and printed once",
    )


def port_refusal(port: int) -> str | None:
    return None if 0 <= port <= 65535 else "--port must be between 0 and 65535"


def host_refusal(host: str, token: Token, token_env: str) -> str | None:
    """Why `host` may not be bound: other machines reach it, and the token guarding it was
    generated (and printed to this terminal) or is short enough to guess."""
    if is_loopback(host):
        return None
    fix = f"(e.g. `export {token_env}=$(openssl rand -hex 32)`) or bind to {LOOPBACK}"
    if token.generated:
        return (
            f"--host {host} is reachable from other machines, so it needs a token you "
            f"chose: set {token_env} {fix}"
        )
    if len(token.value) < MIN_NETWORK_TOKEN:
        return (
            f"{token_env} is too short for --host {host}: use {MIN_NETWORK_TOKEN}+ characters {fix}"
        )
    return None


def token_line(token: Token, token_env: str) -> str:
    """What the terminal says of the token at start: a generated one in full, once."""
    if token.generated:
        return f"token (generated; set {token_env} to choose one): {token.value}"
    return f"token: from ${token_env}"


def prepare(args: argparse.Namespace, refusal: Refusal, prog: str) -> tuple[Token, Teams] | None:
    """The token and the checked teams; None after printing why the flags are refused.

    A team config that does not load raises ConfigError, which `massgen.cli` prints as
    one line.
    """
    token = Token.from_env(dict(os.environ), args.token_env)
    problem = refusal(args, token)
    if problem:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        return None
    from massgen.serve.teams import Teams

    teams = Teams(args.config, Path(args.teams_dir) if args.teams_dir else None)
    teams.check()
    return token, teams


def listen(app: Any, host: str, port: int) -> int:
    """Serve `app` until Ctrl-C (uvicorn has shut down by then)."""
    import uvicorn

    # No access log: the web view's first URL carries the token as a query parameter.
    config = uvicorn.Config(
        app, host=host, port=port, access_log=False, log_level="warning", lifespan="on"
    )
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run()
    return ExitCode.OK
