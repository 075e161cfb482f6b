"""`massgen mcp`: the team as an MCP server, for coding agents and any MCP client.

    cli.py       the command: flags, stdio by default, streamable HTTP on loopback
    server.py    the FastMCP server: the `ask_team`, `list_teams` and `review` tools
    asking.py    one team run for a tool call: slots, deadline, cost cap, context files,
                 progress notifications, cancellation that keeps the journal
    progress.py  which events become progress messages, and their words
    teams.py     the teams that can run here (keys present, local models installed)
    http.py      the streamable-HTTP app behind `massgen serve`'s token and Host rules

A thin layer over `massgen.api.TeamRun`, like `massgen serve` (whose token and Host check
it reuses, so it sits one line above it in the layer drawing). The `mcp` SDK is imported
only here, never by `massgen --help`.
"""
