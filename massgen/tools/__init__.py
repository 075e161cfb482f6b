"""What agents can do besides answering and voting: the one tool seam (`base.py`) and the
toolboxes behind it (MCP servers, and later workspace files and commands)."""
