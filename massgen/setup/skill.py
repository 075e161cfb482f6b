"""`massgen install-skill`: teach a coding agent when and how to ask the team.

Writes `SKILL.md` (the Agent Skills format Claude Code and Codex read: YAML front matter
with `name` and `description`, then instructions) into the agent's skills directory, and
prints the one line that registers `massgen mcp` with that agent. A `SKILL.md` already
there that differs from this version's (the user edited it, or another massgen wrote it)
is left alone unless `--force`.

Where each agent looks for skills in a user's home:
    --claude   ~/.claude/skills/massgen/    (Claude Code)
    --codex    ~/.agents/skills/massgen/    (Codex's documented user scope; older Codex
                                             releases read ~/.codex/skills: use --path)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from massgen.core.status import ExitCode

SKILL = Path(__file__).with_name("SKILL.md")
NAME = "massgen"
TARGETS = {"claude": (".claude", "skills", NAME), "codex": (".agents", "skills", NAME)}
CLAUDE_LINE = "claude mcp add massgen -- massgen mcp"
CODEX_ENTRY = '[mcp_servers.massgen]\ncommand = "massgen"\nargs = ["mcp"]'


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="massgen install-skill",
        description="Write a SKILL.md that teaches a coding agent to ask the massgen team, "
        "and print how to register the MCP server with it.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--claude", action="store_true", help="~/.claude/skills/massgen/")
    where.add_argument("--codex", action="store_true", help="~/.agents/skills/massgen/")
    where.add_argument("--path", metavar="DIR", help="this directory (the skill's own)")
    parser.add_argument("--force", action="store_true", help="replace a SKILL.md that differs")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    agent = "claude" if args.claude else "codex" if args.codex else None
    if agent is None:
        folder = Path(args.path).expanduser()
    else:
        folder = Path.home().joinpath(*TARGETS[agent])
    problem = install(folder, force=args.force)
    if problem is not None:
        print(f"massgen install-skill: error: {problem}", file=sys.stderr)
        return ExitCode.CONFIG
    print(f"wrote {folder / 'SKILL.md'}")
    print(register_lines(agent))
    return ExitCode.OK


def install(folder: Path, *, force: bool = False) -> str | None:
    """Write SKILL.md into `folder`; why not, or None when it is in place."""
    text = SKILL.read_text(encoding="utf-8")
    target = folder / "SKILL.md"
    try:
        if target.exists() and not force and target.read_text(encoding="utf-8") != text:
            return (
                f"{target} exists and differs from this massgen's skill (edited, or from "
                "another version); kept as it is. Add --force to replace it"
            )
        folder.mkdir(parents=True, exist_ok=True)
        from massgen.record.atomic import write_text

        write_text(target, text)
    except OSError as error:
        return f"cannot write {target}: {error.strerror or error}"
    return None


def register_lines(agent: str | None) -> str:
    """How to register the MCP server with `agent` (both when it is not known)."""
    claude = f"register the MCP server with Claude Code:\n  {CLAUDE_LINE}"
    codex = "register it with Codex: add to ~/.codex/config.toml\n  " + CODEX_ENTRY.replace(
        "\n", "\n  "
    )
    if agent == "claude":
        return claude
    if agent == "codex":
        return codex
    return f"{claude}\n{codex}"
