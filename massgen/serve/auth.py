"""The bearer token: from the environment or generated, checked in constant time.

The web page cannot send headers from an `EventSource`, so after it proves the token once
(`POST /api/login` with the header) it gets an HttpOnly, SameSite=Strict cookie derived
from the token. The cookie is accepted for GET requests only: a cross-site page can make a
browser send a cookie, but GETs here change nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass

COOKIE = "massgen_serve"
DEFAULT_TOKEN_ENV = "MASSGEN_SERVE_TOKEN"


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    generated: bool  # made up at start (printed once), not from the environment

    @classmethod
    def from_env(cls, env: dict[str, str], name: str = DEFAULT_TOKEN_ENV) -> Token:
        given = env.get(name, "").strip()
        return cls(given, False) if given else cls(secrets.token_urlsafe(32), True)

    def matches(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.encode(), self.value.encode())

    @property
    def cookie_value(self) -> str:
        """What the page's cookie holds: derived from the token, not the token itself."""
        return hmac.new(self.value.encode(), b"massgen-serve-cookie", hashlib.sha256).hexdigest()

    def cookie_matches(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.encode(), self.cookie_value.encode())


def bearer(header: str) -> str:
    """The token of an `Authorization: Bearer TOKEN` header ('' if it has none)."""
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def is_loopback(host: str) -> bool:
    """`localhost` or an address in 127.0.0.0/8 or ::1; anything unparseable is not."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
