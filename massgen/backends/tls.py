"""One TLS context per process, shared by every provider client.

Building a default context (loading the CA bundle) costs about 20 ms, and each SDK client
builds its own unless given one: with a team of agents that was most of a run's overhead.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def context() -> ssl.SSLContext:
    # The same trust store the SDKs' own default would use (truststore or certifi).
    import httpx2

    return httpx2.create_ssl_context()
