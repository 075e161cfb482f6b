"""An MCP server for the progress tests, written with the SDK: one tool that reports
progress (`ctx.report_progress`) before it answers.

    python tests/tools/progress_server.py
"""

from __future__ import annotations

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("progress")


@server.tool()
async def countdown(steps: int, ctx: Context) -> str:
    """Count `steps` steps, reporting each one."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    await ctx.report_progress(steps + 1)  # no total, no message
    return f"counted {steps}"


if __name__ == "__main__":
    server.run("stdio")
