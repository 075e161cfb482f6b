"""The chat's slash commands: one table of their names, their line in `/help`, and the
report each prints about the session and its last turn.

Reports only read the chat, except `/clear`, which has it start over. `/quit` and
`/resume` have no report: the loop acts on them (it ends, or it awaits a resumed turn).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from massgen.record.state import RunState
from massgen.ui import reports

if TYPE_CHECKING:
    from massgen.chat import Chat

QUIT = ("/quit", "/exit", "/q")
RESUME = "/resume"
NO_TURN_YET = "no turn yet in this chat"


@dataclass(frozen=True, slots=True)
class Command:
    names: tuple[str, ...]
    about: str  # its line in /help
    report: Callable[[Chat], str] | None = None  # None: the loop acts on it


def command_name(line: str) -> str:
    """The command a slash line names: its first word; case does not matter."""
    return line.split()[0].lower()


def run_command(chat: Chat, line: str) -> None:
    """Print the report of the command `line` names, or say that there is no such one."""
    name = command_name(line)
    report = _REPORTS.get(name)
    if report is None:
        chat.say(f"unknown command {name}; /help lists them", style="yellow")
    else:
        chat.say(report(chat).rstrip("\n"))


def _help(chat: Chat) -> str:
    width = max(len(", ".join(c.names)) for c in COMMANDS)
    lines = [f"  {', '.join(c.names):<{width}}  {c.about}" for c in COMMANDS]
    return "\n".join(["anything else is a question for the team;", *lines])


def _clear(chat: Chat) -> str:
    old = chat.session
    chat.start_over()
    kept = f"; session {old.id} is kept" if old.turns() else ""
    return f"conversation cleared: new session {chat.session.id}{kept}"


def _status(chat: Chat) -> str:
    turns = chat.session.turns()
    lines = [
        f"session {chat.session.id} · {len(turns)} turn(s) saved in {chat.session.dir}",
        f"in context: {len(chat.history)} earlier turn(s)",
        f"team: {len(chat.loaded.config.agents)} agent(s) from "
        f"{chat.loaded.source or 'the command line'}",
    ]
    if turns:
        last = turns[-1]
        winner = f" · winner {last.winner} ({last.winner_label})" if last.winner else ""
        lines.append(f"last turn: {last.number} · {last.status}{winner}")
        if last.log_dir:
            lines.append(f"logs: {last.log_dir}")
    return "\n".join(lines)


def _cost(chat: Chat) -> str:
    return reports.cost_text(chat.last.state if chat.last else None, chat.session.turns())


def _about_last(report: Callable[[RunState], str]) -> Callable[[Chat], str]:
    return lambda chat: report(chat.last.state) if chat.last else NO_TURN_YET


def _table(chat: Chat) -> str:
    if chat.last is None:
        return NO_TURN_YET
    from massgen.record.table import coordination_table

    return coordination_table(chat.last.events, width=chat.console.size.width)


def _config(chat: Chat) -> str:
    return reports.config_text(chat.loaded.config, chat.loaded.source)


# In the order /help lists them.
COMMANDS: tuple[Command, ...] = (
    Command(("/help", "/h"), "this list", _help),
    Command(QUIT, "leave (Ctrl-D or Ctrl-C at the prompt too)"),
    Command(
        ("/clear", "/reset"), "forget the conversation; the next turn starts a new session", _clear
    ),
    Command(("/status",), "the session, its turns and the last result", _status),
    Command(("/cost",), "tokens and cost: last turn per agent, and the whole session", _cost),
    Command(
        ("/answers",), "every answer of the last turn, in full", _about_last(reports.answers_text)
    ),
    Command(
        ("/votes",),
        "the last turn's votes with reasons, the tally, the winner",
        _about_last(reports.votes_text),
    ),
    Command(("/table",), "the last turn's coordination table", _table),
    Command(("/config",), "the team: agents, backends, models, settings", _config),
    Command((RESUME,), "continue the last turn, if it was interrupted, where it stopped"),
)
_REPORTS = {name: c.report for c in COMMANDS if c.report is not None for name in c.names}
