"""What `massgen serve` and `massgen mcp` share around their listening socket: the token
from the environment, the refusal of unsafe flags, the checked teams, and uvicorn.

Nothing heavy at import: `massgen serve --help` must not load the web stack or a config.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from massgen.core.status import ExitCode
from massgen.serve.auth import Token

TYPE_CHECKING = False  # not typing's: `massgen serve --help` stays light
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from massgen.serve.teams import Teams

    Refusal = Callable[[argparse.Namespace, Token], str | None]


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
