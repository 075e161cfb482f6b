"""A small MCP server shipped with massgen, for `@examples/tools/mcp_custom` and tests.

    python -m massgen.tools.example_server            # stdio
    python -m massgen.tools.example_server --http 8765  # streamable-http on 127.0.0.1

Its tools are pure functions (no files, no network), so they are safe to call.
"""

from __future__ import annotations

import argparse

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("massgen-example")
_PURE = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)


@server.tool(annotations=_PURE)
def add(a: float, b: float) -> str:
    """Add two numbers."""
    return f"{a + b:g}"


@server.tool(annotations=_PURE)
def word_count(text: str) -> str:
    """Count the words in a text."""
    return str(len(text.split()))


@server.tool(annotations=_PURE)
def reverse(text: str) -> str:
    """Reverse a text, character by character."""
    return text[::-1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m massgen.tools.example_server")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable-http")
    serve(server, parser.parse_args(argv).http)


def serve(mcp: FastMCP, http_port: int | None) -> None:
    """Over stdio, or over streamable-http on loopback only when given a port."""
    if http_port is None:
        mcp.run("stdio")
    else:
        mcp.settings.host, mcp.settings.port = "127.0.0.1", http_port
        mcp.run("streamable-http")


if __name__ == "__main__":
    main()
