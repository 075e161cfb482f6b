"""An MCP server for the tests, written with the SDK: well-behaved tools and faults.

    python tests/tools/fault_server.py [--garbage] [--fail] [--http PORT]

--garbage prints non-JSON-RPC lines on stdout before serving; --fail writes to stderr and
exits at once (a server that cannot start).
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
from mcp.server.fastmcp import Context, FastMCP

from massgen.tools.example_server import serve

server = FastMCP("faults")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool()
def env_names() -> str:
    """The names of this process's environment variables."""
    return " ".join(sorted(os.environ))


@server.tool()
async def hang() -> str:
    """Never answer (while still serving other calls)."""
    await anyio.sleep(3600)
    return "late"


@server.tool()
def crash() -> str:
    """Die mid-call."""
    os._exit(3)


@server.tool()
def big() -> str:
    """Five megabytes of text."""
    return "x" * (5 * 1024 * 1024)


@server.tool()
def fail() -> str:
    """A tool error."""
    raise ValueError("it went wrong")


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named `extra` and say the list changed."""
    server.add_tool(lambda: "extra!", name="extra", description="Added later.")
    await ctx.session.send_tool_list_changed()
    return "grown"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--fail", action="store_true")
    parser.add_argument("--http", type=int)
    args = parser.parse_args()
    if args.fail:
        print("fault_server: cannot start: no such database", file=sys.stderr)
        sys.exit(2)
    if args.garbage:
        print("hello, this is not JSON-RPC", flush=True)
        print("{not json either", flush=True)
    serve(server, args.http)


if __name__ == "__main__":
    main()
