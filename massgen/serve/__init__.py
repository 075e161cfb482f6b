"""`massgen serve`: an OpenAI-compatible endpoint over a team, and a live web view.

    cli.py       the command: flags, the loopback/token rule, the start-up lines, uvicorn
    app.py       the Starlette app: routes, the bearer check, CORS only when asked
    auth.py      the token: where it comes from, constant-time checks, the page's cookie
    teams.py     which teams a `model` name can mean (served config, presets, --teams-dir)
    runs.py      live runs: each one's event list, followers, cancellation, the slot bound
    wire.py      the Chat Completions wire: messages → question + history, events → chunks
    completions.py  /v1/chat/completions over a live run: one answer, or a stream
    history.py   past runs from the log directories, read by validated run id only
    static/      the web page (plain HTML/CSS/JS, no build step, nothing from a CDN)

A thin layer over `massgen.api.TeamRun`: it adds no coordination of its own. Starlette,
uvicorn and sse-starlette are imported only here, never by `massgen --help`.
"""
