"""Streamable HTTP for `massgen mcp --http`: the SDK's app behind `massgen serve`'s rules.

Every request must name this server in its `Host` header (`serve/hosts.py`: DNS
rebinding) and carry the bearer token (`serve/auth.py`: from the environment, else
generated and printed once). The token check is ASGI middleware around the SDK's own app,
so the SDK's session manager keeps its lifespan.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from massgen.serve.auth import Token, bearer
from massgen.serve.hosts import HostCheck, allowed_names

PATH = "/mcp"


class TokenCheck:
    """ASGI middleware: 401 for an HTTP request without `Authorization: Bearer TOKEN`."""

    def __init__(self, app: ASGIApp, token: Token, token_env: str) -> None:
        self.app, self.token, self.token_env = app, token, token_env

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        given = bearer(headers.get(b"authorization", b"").decode("latin-1"))
        if given and self.token.matches(given):
            await self.app(scope, receive, send)
            return
        message = f"missing or wrong bearer token (Authorization: Bearer ${self.token_env})"
        body = json.dumps({"error": message}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"www-authenticate", b"Bearer"),
                                (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def guarded(app: ASGIApp, token: Token, token_env: str, host: str) -> ASGIApp:
    """`app` behind the Host check (first, as in `serve`) and the token check."""
    return HostCheck(TokenCheck(app, token, token_env), allowed_names(host))
