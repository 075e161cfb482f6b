"""A directory served over HTTP on 127.0.0.1, for tests that download what a config names."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def serving(directory: Path) -> Iterator[str]:
    """The base URL of `directory`, served until the block ends."""
    handler = type(
        "Quiet", (http.server.SimpleHTTPRequestHandler,), {"log_message": lambda *_: None}
    )
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: handler(*a, directory=str(directory))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
