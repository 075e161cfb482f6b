"""Agents' workspaces: a directory per agent, snapshots tied to answers, file and command tools.

paths.py     where a path a model writes points; anything outside is refused
ignore.py    a small `.gitignore` matcher (what a snapshot leaves out)
store.py     one content-addressed store per run; a snapshot is a manifest
files.py     the file tools (one in-process toolbox), peers read through the store
team.py      a run's workspaces: publish, the presenter's start, the final copy
runner.py    a bounded command runner that kills the whole process group
commands.py  the `execute_command` tool over the runner
memory.py    filesystem memory: memory/ files shown in prompts, carried across chat turns
"""
