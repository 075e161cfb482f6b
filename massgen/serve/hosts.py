"""Which `Host` headers the server answers: the defence against DNS rebinding.

A web page on `evil.example` can make its own name resolve to 127.0.0.1 and then read
`http://evil.example:8000/` from the victim's browser as same-origin; the only sign is the
`Host` header, which still says `evil.example`. So every request (every route, `/` and the
static files included) must name the server: a loopback name (`localhost`, 127.0.0.0/8,
`::1`), the `--host` it was bound to, or a name given with `--allowed-host`; anything else
gets 421 before any route runs. Bound to every interface (`0.0.0.0`, `::`), the address a
client uses is not known in advance: then any name is answered unless `--allowed-host`
lists some, and every data route still needs the token.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def allowed_names(bound: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The host names to answer, or None for any (bound to every interface, no list)."""
    listed = frozenset(host_name(name) for name in extra)
    if host_name(bound) in WILDCARDS and not listed:
        return None
    return LOOPBACK_NAMES | {host_name(bound)} | listed


def host_name(header: str) -> str:
    """The name of a `Host` value: no port, no brackets, lower case, no trailing dot."""
    value = header.strip().lower()
    if value.startswith("["):  # [::1]:8000
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:  # name:port (a bare IPv6 address has several colons)
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def is_allowed(header: str, names: frozenset[str] | None) -> bool:
    if names is None:
        return True
    name = host_name(header)
    if name in names:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class HostCheck:
    """ASGI middleware: 421 for a request whose `Host` is not one of `names`."""

    def __init__(self, app: ASGIApp, names: frozenset[str] | None) -> None:
        self.app, self.names = app, names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.names is None:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if is_allowed(host, self.names):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": {"message": f"unknown host {host!r}: this server "
                                     "answers only the names it was started for",
                                     "type": "invalid_request_error",
                                     "code": "misdirected_request"}}).encode()  # fmt: skip
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "http.response.start", "status": 421,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})
