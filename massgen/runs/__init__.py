"""Where a run is put together: from what the caller gave (a config, a question) to a
`TeamRun` whose orchestrator coordinates equipped members.

    loading.py     what the caller gave → a validated `LoadedConfig` (no asyncio)
    defaults.py    the default team from the environment
    members.py     config → the team's members (backends, prices)
    toolboxes.py   the team's toolboxes (MCP, commands, custom tools, planning, media)
    wiring.py      the permission engine from the config, around the toolboxes
    equipment.py   what a run gives its members: tools, engine, aids, memory, uploads
    media.py, uploads.py   media on the user message; file-search uploads
    subagents/     the `spawn_subagents` tools and the child runs they start
    turn.py        `TeamRun`: one turn, its log, its result (`massgen.api` exports it)
    result.py      `RunResult`: what a run returns
    resuming.py    an interrupted run's directory → what to continue from
    interrupts.py  Ctrl-C: the first stops the run cleanly, the second at once
"""
